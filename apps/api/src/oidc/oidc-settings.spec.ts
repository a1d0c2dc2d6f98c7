import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApiConfig } from '../config.js';
import { oidcSettings, roleForGroups } from './oidc-settings.js';

const base = {
  OIDC_ISSUER_URL: 'https://sso.example.com/realms/fleet',
  OIDC_CLIENT_ID: 'karpenter-fleet',
  OIDC_GROUP_ROLES: JSON.stringify([{ group: 'fleet-admins', role: 'ADMIN' }]),
};
const settings = (env: Record<string, string>) => oidcSettings(loadApiConfig(env));
const problem = (env: Record<string, string>) => {
  try {
    loadApiConfig(env);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected the configuration to be refused');
};

describe('OIDC settings', () => {
  it('is off without an issuer, and defaults what it can', () => {
    expect(settings({})).toBeNull();
    expect(settings({ ...base, FLEET_PUBLIC_URL: 'https://fleet.example.com/' })).toEqual({
      issuer: 'https://sso.example.com/realms/fleet',
      clientId: 'karpenter-fleet',
      clientSecret: null,
      providerName: 'sso.example.com',
      redirectUrl: 'https://fleet.example.com/auth/oidc/callback',
      scopes: 'openid profile email',
      usernameClaim: 'preferred_username',
      groupsClaim: 'groups',
      groupRoles: [{ group: 'fleet-admins', role: 'ADMIN', labelSelector: null }],
      jwksCooldownMs: 30_000,
      clockToleranceSeconds: 5,
      maxSessionSeconds: 43_200,
    });
  });

  it('names the variable, the rule and the field of every problem', () => {
    expect(
      problem({
        OIDC_ISSUER_URL: 'http://sso.example.com',
        OIDC_GROUP_ROLES: JSON.stringify([
          { group: 'a', role: 'ADMIN' },
          { group: ' ', role: 'ROOT' },
          { group: 'b', role: 'VIEWER', labelSelector: 'team in (a' },
          { group: 'c', role: 'VIEWER', labelSelector: '  ' },
          { group: 'd', role: 'VIEWER', extra: true },
        ]),
      }),
    ).toBe(
      [
        'invalid configuration:',
        '  OIDC_ISSUER_URL: must be an https:// URL (http:// only for a loopback address)',
        '  OIDC_CLIENT_ID: required when OIDC_ISSUER_URL is set',
        '  OIDC_GROUP_ROLES[1].group: must name a group',
        '  OIDC_GROUP_ROLES[1].role: Invalid option: expected one of "VIEWER"|"OPERATOR"|"ADMIN"',
        '  OIDC_GROUP_ROLES[2].labelSelector: unbalanced parentheses',
        '  OIDC_GROUP_ROLES[3].labelSelector: must not be blank; omit it for a role over every cluster',
        '  OIDC_GROUP_ROLES[4]: Unrecognized key: "extra"',
      ].join('\n'),
    );
  });

  it('refuses rules that are missing, doubled, empty or unreadable', () => {
    const { OIDC_GROUP_ROLES: _, ...withoutRules } = base;
    expect(problem(withoutRules)).toContain(
      'OIDC_GROUP_ROLES: required when OIDC_ISSUER_URL is set',
    );
    expect(problem({ ...base, OIDC_GROUP_ROLES_FILE: '/nowhere.yaml' })).toContain(
      'OIDC_GROUP_ROLES: set either OIDC_GROUP_ROLES or OIDC_GROUP_ROLES_FILE, not both',
    );
    expect(problem({ ...base, OIDC_GROUP_ROLES: '[]' })).toContain(
      'OIDC_GROUP_ROLES: must map at least one group to a role',
    );
    expect(problem({ ...base, OIDC_GROUP_ROLES: '{not json' })).toMatch(
      /OIDC_GROUP_ROLES: cannot be read: /,
    );
    expect(problem({ OIDC_CLIENT_ID: 'x' })).toContain(
      'OIDC_ISSUER_URL: required when OIDC_CLIENT_ID is set',
    );
    expect(problem({ ...base, OIDC_SCOPES: 'profile email' })).toContain(
      'OIDC_SCOPES: must include "openid"',
    );
  });

  it('reads the rules from a YAML file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oidc-settings-'));
    const file = join(dir, 'group-roles.yaml');
    writeFileSync(
      file,
      '- group: team-a\n  role: OPERATOR\n  labelSelector: team=a\n- group: all\n  role: VIEWER\n',
    );
    const { OIDC_GROUP_ROLES: _, ...withoutRules } = base;
    expect(settings({ ...withoutRules, OIDC_GROUP_ROLES_FILE: file })!.groupRoles).toEqual([
      { group: 'team-a', role: 'OPERATOR', labelSelector: 'team=a' },
      { group: 'all', role: 'VIEWER', labelSelector: null },
    ]);
    writeFileSync(file, '- group: team-a\n  role: OWNER\n');
    expect(problem({ ...withoutRules, OIDC_GROUP_ROLES_FILE: file })).toContain(
      'OIDC_GROUP_ROLES_FILE[0].role: Invalid option',
    );
  });

  it('lets the first rule matching one of the groups decide', () => {
    const rules = settings({
      ...base,
      OIDC_GROUP_ROLES: JSON.stringify([
        { group: 'team-a', role: 'OPERATOR', labelSelector: 'team=a' },
        { group: 'everyone', role: 'VIEWER' },
      ]),
    })!.groupRoles;
    expect(roleForGroups(rules, ['everyone', 'team-a'])?.role).toBe('OPERATOR');
    expect(roleForGroups(rules, ['everyone'])?.role).toBe('VIEWER');
    expect(roleForGroups(rules, ['others'])).toBeUndefined();
  });
});
