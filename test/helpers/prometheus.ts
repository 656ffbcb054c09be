// Reading a /metrics answer the way Prometheus would: parse-prometheus-text-format (a port of the
// Python client's parser), then one sample's value by name and labels.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export type Families = ReturnType<typeof parsePrometheusTextFormat>;

/** Parses the text; throws on anything that is not Prometheus' text format. */
export function parseMetrics(text: string): Families {
  return parsePrometheusTextFormat(text);
}

/** The sum of the samples of `name` whose labels include `labels` (0 when there are none). */
export function sampleValue(families: Families, name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  if (!family) return 0;
  return family.metrics
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((sum, m) => sum + Number(m.value ?? m.count ?? 0), 0);
}
