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

/** `member` is the list element of the AWS Query protocol (IAM, STS); EC2's is `item`. */
export function renderXml(object: XmlObject, listElement: 'item' | 'member' = 'item'): string {
  let out = '';
  for (const [name, value] of Object.entries(object)) {
    if (value === undefined) continue;
    out += `<${name}>${renderValue(value, listElement)}</${name}>`;
  }
  return out;
}

function renderValue(value: XmlValue, listElement: 'item' | 'member'): string {
  if (value === undefined) return '';
  if (Array.isArray(value))
    return value
      .map((v) => `<${listElement}>${renderValue(v, listElement)}</${listElement}>`)
      .join('');
  if (typeof value === 'object') return renderXml(value, listElement);
  return escapeXml(String(value));
}
