/** A value the EC2 Query protocol can render: lists become `<name><item>…</item></name>`. */
export type XmlValue = string | number | boolean | undefined | XmlObject | XmlValue[];
export interface XmlObject {
  [element: string]: XmlValue;
}

export function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export function renderXml(object: XmlObject): string {
  let out = '';
  for (const [name, value] of Object.entries(object)) {
    if (value === undefined) continue;
    out += `<${name}>${renderValue(value)}</${name}>`;
  }
  return out;
}

function renderValue(value: XmlValue): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => `<item>${renderValue(v)}</item>`).join('');
  if (typeof value === 'object') return renderXml(value);
  return escapeXml(String(value));
}
