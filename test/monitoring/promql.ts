/**
 * Just enough of PromQL to say which series an expression reads: the metric names and, for
 * each, the label names its matchers test. Function and aggregation names are told apart by the
 * parenthesis that follows them, label lists of by/without/on/ignoring/group_* are dropped.
 */
export interface SeriesUse {
  metric: string;
  labels: string[];
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
const IDENT = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;

export function seriesUsed(expr: string): SeriesUse[] {
  // String literals would hide braces and words: blank them first, keeping their length.
  const src = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, (s) =>
    '"'.padEnd(s.length - 1, ' ').concat('"'),
  );
  const uses: SeriesUse[] = [];
  const closing = (char: string, from: number) => {
    const at = src.indexOf(char, from);
    if (at < 0) throw new Error(`unbalanced ${char} in ${expr}`);
    return at;
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '"') {
      i = closing('"', i + 1) + 1;
    } else if (c === '[') {
      i = closing(']', i) + 1; // range or subquery: durations only
    } else if (c === '{') {
      // A selector without a metric name ({__name__="x"}) is not something this reads.
      throw new Error(`a selector without a metric name in ${expr}`);
    } else if (/[0-9.]/.test(c)) {
      const m = /[0-9.]+(?:e[+-]?\d+)?[a-z]*/iy;
      m.lastIndex = i;
      m.exec(src);
      i = m.lastIndex;
    } else if (/[a-zA-Z_:]/.test(c)) {
      IDENT.lastIndex = i;
      const word = IDENT.exec(src)![0];
      i = IDENT.lastIndex;
      const rest = src.slice(i).trimStart();
      if (/^(by|without|on|ignoring|group_left|group_right)$/.test(word)) {
        if (rest.startsWith('(')) i = closing(')', i) + 1;
      } else if (
        rest.startsWith('(') ||
        /^(by|without)\s*\(/.test(rest) ||
        KEYWORDS.has(word.toLowerCase())
      ) {
        // a function, an aggregation (its grouping may come first), or an operator word
      } else {
        const labels: string[] = [];
        if (rest.startsWith('{')) {
          const open = closing('{', i);
          const close = closing('}', open);
          const body = src.slice(open + 1, close);
          for (const m of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g))
            labels.push(m[1]!);
          i = close + 1;
        }
        uses.push({ metric: word, labels });
      }
    } else {
      i++;
    }
  }
  return uses;
}

export interface Exposition {
  /** Metric names of the samples, each with the label names its samples carry. */
  samples: Map<string, Set<string>>;
  /**
   * Names a `# TYPE` line declares, histograms' and summaries' series names included: a labelled
   * counter nothing has counted yet is declared but has no sample.
   */
  declared: Set<string>;
}

/** Reads a Prometheus text exposition. */
export function readExposition(text: string): Exposition {
  const samples = new Map<string, Set<string>>();
  const declared = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\w+)$/.exec(line);
    if (type) {
      const [, name, kind] = type as unknown as [string, string, string];
      declared.add(name);
      if (kind === 'histogram')
        for (const s of ['_bucket', '_sum', '_count']) declared.add(name + s);
      if (kind === 'summary') for (const s of ['_sum', '_count']) declared.add(name + s);
    }
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels = samples.get(m[1]!) ?? new Set<string>();
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(l[1]!);
    samples.set(m[1]!, labels);
  }
  return { samples, declared };
}
