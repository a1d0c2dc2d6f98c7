import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { refinementInJsonSchema } from './json-schema-refinement.js';
import { compileJsonValidator } from './json-validator.js';
import { StatusReport } from './messages.js';

const at = '2026-12-06T00:00:00.000Z';
const valid = {
  clusterId: '0b0e6a3c-6f1d-4d5e-9a3b-2f1c0d9e8a7b',
  observedGeneration: 3,
  conditions: [
    {
      type: 'Available',
      status: 'True',
      reason: 'AsExpected',
      message: 'ok',
      lastTransitionTime: at,
    },
  ],
  metrics: { nodes: 12, vcpus: 96, nodeClaimsByState: { Launched: 3, Pending: 1 } },
  csrDecisions: [],
  nodeClaims: [
    {
      name: 'general-00001',
      nodePool: 'general',
      nodeName: 'ip-10-0-0-1.ec2.internal',
      instanceType: 'm6i.xlarge',
      zone: 'us-east-1a',
      capacityType: 'on-demand',
      state: 'Ready',
      createdAt: at,
    },
  ],
  sidecar: { version: '1.4.0', contractVersion: 3 },
  reportedAt: at,
  digest: 'd'.repeat(64),
};

/** Every value reachable in `v`, each replaced in turn by each of `replacements`. */
function* mutations(v: unknown, replacements: unknown[]): Generator<unknown> {
  for (const r of replacements) yield r;
  if (Array.isArray(v)) {
    const items = v as unknown[];
    for (let i = 0; i < items.length; i++)
      for (const m of mutations(items[i], replacements))
        yield items.map((x, j) => (j === i ? m : x));
    yield [];
    yield [...items, ...items];
  } else if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      for (const m of mutations(o[k], replacements)) yield { ...o, [k]: m };
      const { [k]: _dropped, ...without } = o;
      yield without;
    }
    yield { ...o, unknownKey: 1 };
  }
}

describe('compileJsonValidator', () => {
  const accepts = compileJsonValidator(StatusReport);

  it('accepts a sidecar report, and never a value zod refuses', () => {
    expect(accepts(valid)).toBe(true);
    const replacements = [
      null,
      -1,
      1.5,
      2 ** 53,
      '',
      'x'.repeat(65),
      '😀'.repeat(40), // 80 UTF-16 code units, 40 code points
      'NotCamel case',
      '2026-12-06T00:00:00+01:00',
      '2026-02-30T00:00:00Z',
      'A'.repeat(64),
      true,
      {},
      [],
      Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`State${i}`, i])),
    ];
    let agreed = 0;
    let mutated = 0;
    for (const candidate of mutations(valid, replacements)) {
      mutated++;
      const zod = StatusReport.safeParse(candidate).success;
      // The fast path may send a valid value to zod, never let an invalid one through.
      if (accepts(candidate)) expect(zod).toBe(true);
      if (accepts(candidate) === zod) agreed++;
    }
    expect(mutated).toBeGreaterThan(500);
    // Where the schema can say it, they agree: the fast path is taken for what sidecars send.
    expect(agreed / mutated).toBeGreaterThan(0.99);
  });

  it('leaves to zod what JSON Schema cannot say: a migration proposal over its size bound', () => {
    const proposal = { computedAt: at, nodePools: [], nodeClassOverrides: {}, notes: [] };
    const withProposal = { ...valid, migrationProposal: proposal };
    expect(accepts(withProposal)).toBe(false);
    // 17 NodeClaim states: the refinement is said in JSON Schema (maxProperties), so refused here.
    const states = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`State${i}`, i]));
    const many = { ...valid, metrics: { ...valid.metrics, nodeClaimsByState: states } };
    expect(StatusReport.safeParse(many).success).toBe(false);
    expect(accepts(many)).toBe(false);
  });

  it('trusts JSON Schema keywords for a refinement only where they are marked as stating it', () => {
    const states = (meta: Record<string, unknown>) =>
      z
        .record(z.string(), z.number())
        .refine((o) => Object.keys(o).length <= 2, 'at most 2')
        .meta(meta);
    const two = { a: 1, b: 2 };
    const three = { a: 1, b: 2, c: 3 };
    // Marked: the keywords take the refinement's place, so the fast path accepts and refuses.
    const marked = compileJsonValidator(states(refinementInJsonSchema({ maxProperties: 2 })));
    expect([marked(two), marked(three)]).toEqual([true, false]);
    // Metadata that merely looks like a bound is not the refinement: everything goes to zod.
    const unmarked = compileJsonValidator(states({ maxProperties: 2 }));
    expect([unmarked(two), unmarked(three)]).toEqual([false, false]);
    const unrelated = compileJsonValidator(states({ minLength: 1, description: 'states' }));
    expect(unrelated(two)).toBe(false);
  });
});
