/** The cluster id the connections bench gives its i-th consumer. */
export const benchClusterId = (i: number) =>
  `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
