import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { onStoredSpecWarning, storedSpec, type StoredSpecWarning } from './profile-store.js';

describe('storedSpec warnings', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('go to stderr by default, never stdout (kfleet export writes YAML there)', () => {
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(storedSpec({ logLevel: 'debug', retired: 1 }, 'profile prod')).toEqual({
      logLevel: 'debug',
    });
    expect(out).not.toHaveBeenCalled();
    expect(err.mock.calls.map((c) => String(c[0]))).toEqual([
      'warning: stored profile prod: retired: unknown field; dropped\n',
    ]);
  });

  it('go to the sink a process injects (the worker and the API: their pino logger)', () => {
    const warnings: StoredSpecWarning[] = [];
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    onStoredSpecWarning((w) => warnings.push(w));
    storedSpec({ retired: 1 }, 'overrides of cluster c1');
    expect(warnings).toEqual([
      { spec: 'overrides of cluster c1', field: 'retired', reason: 'unknown field; dropped' },
    ]);
    expect(err).not.toHaveBeenCalled();
  });
});
