import { describe, expect, it } from '@jest/globals';
import {
  configPath,
  parseConfig,
  resolveConnection,
  serializeConfig,
  upsertContext,
  type KfleetConfig,
} from './config.js';

const DEFAULT = 'http://127.0.0.1:4000';
const config: KfleetConfig = {
  apiVersion: 'kfleet/v1',
  kind: 'Config',
  'current-context': 'prod',
  contexts: [
    { name: 'prod', server: 'https://prod.example.com', token: 'prod-secret' },
    { name: 'staging', server: 'https://staging.example.com', token: 'staging-secret' },
  ],
};

describe('config file', () => {
  it('lives at KFLEET_CONFIG, else under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(configPath({ KFLEET_CONFIG: '/x/c', HOME: '/h' })).toBe('/x/c');
    expect(configPath({ XDG_CONFIG_HOME: '/xdg', HOME: '/h' })).toBe('/xdg/kfleet/config');
    expect(configPath({ HOME: '/h' })).toBe('/h/.config/kfleet/config');
    expect(configPath({})).toBeUndefined();
  });

  it('round-trips, and login replaces a context by name and makes it current', () => {
    const next = upsertContext(config, {
      name: 'staging',
      server: 'https://staging.example.com',
      token: 'new',
    });
    const again = parseConfig(serializeConfig(next), 'c');
    expect(again['current-context']).toBe('staging');
    expect(again.contexts.map((c) => [c.name, c.token])).toEqual([
      ['prod', 'prod-secret'],
      ['staging', 'new'],
    ]);
  });

  it('names the field of a bad hand edit', () => {
    expect(() =>
      parseConfig('contexts:\n- name: a\n  server: not-a-url\n  token: t\n', '/c'),
    ).toThrow(/^\/c: contexts\.0\.server: /);
    expect(() =>
      parseConfig(
        'contexts:\n- {name: a, server: "http://a", token: t}\n- {name: a, server: "http://b", token: u}\n',
        '/c',
      ),
    ).toThrow('/c: context a is defined twice');
    expect(() => parseConfig('contexts: [', '/c')).toThrow(/^\/c: invalid YAML/);
  });
});

describe('which server and token a command uses', () => {
  const resolve = (
    flags: { api?: string; token?: string; context?: string },
    env: Record<string, string> = {},
  ) => resolveConnection({ flags, env, config }, DEFAULT);

  it('the current context, without flags or environment', () => {
    expect(resolve({})).toEqual({
      apiUrl: 'https://prod.example.com',
      token: 'prod-secret',
      context: 'prod',
    });
  });

  it('environment over the current context, flags over both', () => {
    expect(resolve({}, { KFLEET_TOKEN: 'env' })).toMatchObject({ token: 'env' });
    expect(resolve({ token: 'flag' }, { KFLEET_TOKEN: 'env' })).toMatchObject({ token: 'flag' });
  });

  it('--context (or KFLEET_CONTEXT) picks a context, over the environment', () => {
    expect(resolve({ context: 'staging' }, { KFLEET_API_URL: 'http://other' })).toEqual({
      apiUrl: 'https://staging.example.com',
      token: 'staging-secret',
      context: 'staging',
    });
    expect(resolve({}, { KFLEET_CONTEXT: 'staging' })).toMatchObject({ token: 'staging-secret' });
    expect(() => resolve({ context: 'nope' })).toThrow(
      'context nope not found (known: prod, staging)',
    );
  });

  it("never sends a context's token to another server", () => {
    expect(resolve({ api: 'http://elsewhere:4000' })).toEqual({ apiUrl: 'http://elsewhere:4000' });
    expect(resolve({}, { KFLEET_API_URL: 'http://elsewhere:4000' })).toEqual({
      apiUrl: 'http://elsewhere:4000',
    });
    // The same server given again keeps its token.
    expect(resolve({ api: 'https://prod.example.com/' })).toMatchObject({ token: 'prod-secret' });
  });

  it('the default URL and no token without any of them', () => {
    expect(resolveConnection({ flags: {}, env: {}, config: parseConfig('', '') }, DEFAULT)).toEqual(
      { apiUrl: DEFAULT },
    );
  });
});
