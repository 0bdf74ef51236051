// Trends: accepted, completed, failed and held per minute over the last hour, and the age of the
// oldest waiting job, charted with uPlot and refreshed every 5 s.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { AlignedData, Options } from 'uplot';
import { api } from '../api.js';
import type { Trends } from '../api.js';
import { ErrorBox, useLoad } from '../ui.js';

const REFRESH_MS = 5000;
const COUNTS = [
  { name: 'accepted', label: 'webhooks accepted', stroke: '#2563eb' },
  { name: 'completed', label: 'actions completed', stroke: '#15803d' },
  { name: 'failed', label: 'actions failed', stroke: '#b91c1c' },
  { name: 'held', label: 'actions held', stroke: '#b45309' },
] as const;

export function TrendsPage() {
  const [loaded] = useLoad(() => api<Trends>('/trends'), 'trends', REFRESH_MS);
  // The oldest job's age is a reading, not a count: the page keeps the readings it has taken.
  const [ages, setAges] = useState<{ at: number; actions: number }[]>([]);
  useEffect(() => {
    if (loaded.status !== 'done') return;
    const { actions } = loaded.value.oldest_waiting_seconds;
    setAges((before) => [...before, { at: Date.now() / 1000, actions: actions ?? 0 }].slice(-720));
  }, [loaded]);

  if (loaded.status === 'failed') return <ErrorBox error={loaded.error} />;
  const trends = loaded.status === 'done' ? loaded.value : undefined;
  const minutes = trends?.minutes ?? [];
  const perMinute: AlignedData = [
    minutes.map((minute) => Date.parse(minute.at) / 1000),
    ...COUNTS.map(({ name }) => minutes.map((minute) => minute[name])),
  ];
  const waiting: AlignedData = [ages.map((age) => age.at), ages.map((age) => age.actions)];
  const last = minutes.at(-1);
  return (
    <section>
      <h1>Trends</h1>
      <p class="muted">The last hour, per minute; refreshed every 5 seconds.</p>
      <Chart
        title="Per minute"
        data={perMinute}
        series={COUNTS.map(({ label, stroke }) => ({ label, stroke }))}
      />
      {last && (
        <p class="stats" aria-live="polite">
          This minute:{' '}
          {COUNTS.map(({ name, label }) => (
            <span key={name}>
              {last[name]} {label}
            </span>
          ))}
        </p>
      )}
      <h2>Oldest waiting job</h2>
      <p class="stats">
        {Object.entries(trends?.oldest_waiting_seconds ?? {}).map(([queue, seconds]) => (
          <span key={queue}>
            {queue}: {seconds === null ? 'none waiting' : `${Math.round(seconds)} s`}
          </span>
        ))}
      </p>
      <Chart
        title="Seconds waited, since this page opened"
        data={waiting}
        series={[{ label: 'actions queue', stroke: '#b45309' }]}
      />
    </section>
  );
}

/** The narrowest time axis, in the charts' unit: seconds, uPlot's default (`ms: 1e-3`). */
const MIN_SPAN_SECONDS = 300;

/**
 * The time axis: at least five minutes wide, and never past the last time charted. When every time
 * is the same (the first reading, or readings under a frozen clock), uPlot widens the axis by
 * `86400 / ms` of the times' unit: with seconds (`ms: 1e-3`) that is 86,400,000 s, not a day's
 * 86,400, and the axis ran on 1,000 days (into 2029). A zoom inside the data keeps its range.
 */
function timeRange(chart: uPlot, min: number, max: number): uPlot.Range.MinMax {
  const times = chart.data[0];
  const last = times[times.length - 1];
  const end = last === undefined ? max : Math.min(max, last);
  return [Math.min(min, end - MIN_SPAN_SECONDS), end];
}

/** Writes the chart's time axis ends on its holder as ISO times: `data-from`, `data-to`. */
function showTimeRange(chart: uPlot, holder: HTMLElement): void {
  const { min, max } = chart.scales.x ?? {};
  // Before the first data, uPlot leaves them null whatever its types say.
  if (typeof min !== 'number' || typeof max !== 'number') return;
  holder.dataset.from = new Date(min * 1000).toISOString();
  holder.dataset.to = new Date(max * 1000).toISOString();
}

/**
 * One uPlot chart, made once and given new data on each refresh; as wide as its container.
 * `data-points` counts the non-zero values drawn, `data-from` and `data-to` are the ends of its
 * time axis (for a reader of the page, and for its tests).
 */
function Chart({
  title,
  data,
  series,
}: {
  title: string;
  data: AlignedData;
  series: { label: string; stroke: string }[];
}) {
  const holder = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot>();
  useEffect(() => {
    const element = holder.current;
    if (!element) return undefined;
    const options: Options = {
      title,
      width: Math.max(280, element.clientWidth),
      height: 240,
      scales: { x: { time: true, range: timeRange } },
      series: [{}, ...series.map(({ label, stroke }) => ({ label, stroke, width: 2 }))],
      hooks: {
        setScale: [
          (self, key) => {
            if (key === 'x') showTimeRange(self, element);
          },
        ],
      },
    };
    chart.current = new uPlot(options, data, element);
    const resize = () =>
      chart.current?.setSize({ width: Math.max(280, element.clientWidth), height: 240 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.current?.destroy();
    };
    // Made once, with the first data; later data goes through setData below.
  }, []);
  useEffect(() => {
    chart.current?.setData(data);
  }, [data]);
  const points = data
    .slice(1)
    .reduce<number>((sum, values) => sum + Array.from(values, Number).filter(Boolean).length, 0);
  return <div class="chart" ref={holder} data-points={points} role="img" aria-label={title} />;
}
