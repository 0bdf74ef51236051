// A trace as a waterfall page, for the screenshot in docs/operations.md: what a tracing backend
// (Jaeger, Tempo) shows, drawn from the spans the test's OTLP receiver got, with no backend.

/** One span as the waterfall needs it: times in nanoseconds since the epoch, as OTLP sends them. */
export interface WaterfallSpan {
  spanId: string;
  parentSpanId: string;
  service: string;
  name: string;
  startNanos: bigint;
  endNanos: bigint;
  attributes: Record<string, string>;
}

/** The attributes shown beside a span's name, when it has them. */
const SHOWN = ['action', 'attempt', 'http_status', 'http.response.status_code', 'webhook_id'];

const escape = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** The spans in tree order (each after its parent, siblings by start time), with their depth. */
export function treeOrder(spans: WaterfallSpan[]): { span: WaterfallSpan; depth: number }[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string, WaterfallSpan[]>();
  for (const span of spans) {
    const parent = ids.has(span.parentSpanId) ? span.parentSpanId : '';
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const ordered: { span: WaterfallSpan; depth: number }[] = [];
  const visit = (parent: string, depth: number) => {
    const siblings = (children.get(parent) ?? []).sort((a, b) =>
      a.startNanos < b.startNanos ? -1 : a.startNanos > b.startNanos ? 1 : 0,
    );
    for (const span of siblings) {
      ordered.push({ span, depth });
      visit(span.spanId, depth + 1);
    }
  };
  visit('', 0);
  return ordered;
}

/** A self-contained HTML page: one row per span, its bar placed on the trace's time line. */
export function waterfallPage(traceId: string, spans: WaterfallSpan[]): string {
  const start = spans.reduce(
    (min, span) => (span.startNanos < min ? span.startNanos : min),
    spans[0]!.startNanos,
  );
  const end = spans.reduce((max, span) => (span.endNanos > max ? span.endNanos : max), 0n);
  const total = Number(end - start) || 1;
  const ms = (nanos: bigint) => (Number(nanos) / 1e6).toFixed(1);
  const rows = treeOrder(spans).map(({ span, depth }) => {
    const left = (Number(span.startNanos - start) / total) * 100;
    const width = Math.max((Number(span.endNanos - span.startNanos) / total) * 100, 0.3);
    const url = span.attributes['url.full'];
    const path = url === undefined ? [] : [new URL(url).pathname];
    const shown = SHOWN.filter((key) => span.attributes[key] !== undefined)
      .map((key) => `${key}=${span.attributes[key]}`)
      .concat(path)
      .join(' ');
    return `<tr class="${escape(span.service)}">
      <td style="padding-left:${depth * 14 + 6}px"><b>${escape(span.service)}</b> ${escape(span.name)}
        <small>${escape(shown)}</small></td>
      <td class="line"><div class="bar" style="margin-left:${left}%;width:${width}%"></div></td>
      <td class="ms">${ms(span.endNanos - span.startNanos)} ms</td></tr>`;
  });
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body { font: 13px system-ui, sans-serif; margin: 16px; color: #1d2330; }
    table { border-collapse: collapse; width: 100%; table-layout: fixed; }
    td { padding: 3px 6px; border-bottom: 1px solid #e6e8ee; white-space: nowrap; overflow: hidden;
      text-overflow: ellipsis; }
    td small { color: #5b6475; margin-left: 6px; }
    td.line { width: 40%; }
    td.ms { text-align: right; color: #5b6475; width: 70px; }
    .bar { height: 12px; border-radius: 2px; background: #7a8699; }
    tr.pw-ingress .bar { background: #2f6fdf; }
    tr.pw-worker .bar { background: #1f9d6b; }
    h1 { font-size: 16px; margin: 0 0 10px; }
  </style></head><body>
    <h1>Trace ${escape(traceId)}: ${spans.length} spans, ${ms(end - start)} ms
      (<span style="color:#2f6fdf">pw-ingress</span>, <span style="color:#1f9d6b">pw-worker</span>)</h1>
    <table>${rows.join('')}</table></body></html>`;
}
