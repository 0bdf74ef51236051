// Form fields the filter forms and editors share.
import { useState } from 'preact/hooks';

/** A form's text values by name, read from the URL's query, with a setter per field. */
export function useFields<Name extends string>(names: readonly Name[], params: URLSearchParams) {
  const [values, setValues] = useState(
    () =>
      Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<
        Name,
        string
      >,
  );
  const set = (name: Name) => (event: Event) =>
    setValues({ ...values, [name]: (event.target as HTMLInputElement).value });
  return { values, set };
}

/** A select of `options` with "any" (empty) first. */
export function Choice({
  label,
  name,
  value,
  options,
  onChange,
}: {
  label: string;
  name: string;
  value: string;
  options: readonly string[];
  onChange: (event: Event) => void;
}) {
  return (
    <label>
      {label}
      <select name={name} value={value} onChange={onChange}>
        <option value="">any</option>
        {options.map((option) => (
          <option key={option}>{option}</option>
        ))}
      </select>
    </label>
  );
}

/** A time range as two local date-times, `from` and `to`. */
export function TimeRange({
  label,
  from,
  to,
  set,
}: {
  label: string;
  from: string;
  to: string;
  set: (name: 'from' | 'to') => (event: Event) => void;
}) {
  return (
    <>
      <label>
        {label} from
        <input type="datetime-local" name="from" value={from} onInput={set('from')} />
      </label>
      <label>
        to
        <input type="datetime-local" name="to" value={to} onInput={set('to')} />
      </label>
    </>
  );
}

/** A JSON document to edit, in a monospace text area. */
export function JsonField({
  label,
  name,
  rows,
  value,
  onChange,
}: {
  label: string;
  name: string;
  rows: number;
  value: string;
  onChange: (text: string) => void;
}) {
  return (
    <label class="block">
      {label}
      <textarea
        name={name}
        rows={rows}
        spellcheck={false}
        value={value}
        onInput={(event) => onChange((event.target as HTMLTextAreaElement).value)}
      />
    </label>
  );
}
