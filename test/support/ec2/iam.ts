import type { IamWorldPolicyStatement, IamWorldRole } from './world.js';
import type { XmlObject } from './xml.js';

/** The IAM Query API's version; a request naming it is IAM's, not EC2's (2016-11-15). */
export const IAM_API_VERSION = '2010-05-08';
export const IAM_XMLNS = 'https://iam.amazonaws.com/doc/2010-05-08/';

export class IamError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const ROLE_ARN = /^arn:aws(-[a-z]+)*:iam::(\d{12}):role\/(?:[\x21-\x7e]*\/)?([\w+=,.@-]{1,64})$/;

type Decision = 'allowed' | 'explicitDeny' | 'implicitDeny';

/**
 * IAM as Karpenter's web-identity role check uses it: SimulatePrincipalPolicy on a role, with
 * IAM's evaluation (an explicit Deny wins, else an Allow, else implicitDeny; `*` and `?`
 * wildcards in actions, case-insensitive, and in resources), its paging (MaxItems 1-1000,
 * default 100; Marker) and its errors (NoSuchEntity 404 for an unknown role, InvalidInput).
 */
export class IamService {
  private roles: IamWorldRole[] = [];

  constructor(private readonly accountId: () => string) {}

  seed(roles: readonly IamWorldRole[] | undefined): void {
    this.roles = structuredClone([...(roles ?? [])]);
  }

  /** Adds the role, or replaces the one of the same name (its policies change). */
  putRole(role: IamWorldRole): void {
    this.roles = [...this.roles.filter((r) => r.RoleName !== role.RoleName), structuredClone(role)];
  }

  roleArn(roleName: string): string {
    const role = this.roles.find((r) => r.RoleName === roleName);
    return `arn:aws:iam::${this.accountId()}:role${role?.Path ?? '/'}${roleName}`;
  }

  dispatch(action: string, params: Map<string, string>): XmlObject {
    switch (action) {
      case 'SimulatePrincipalPolicy':
        return this.simulatePrincipalPolicy(params);
      default:
        throw new IamError(
          'InvalidAction',
          `Could not find operation ${action} for version ${IAM_API_VERSION}`,
        );
    }
  }

  private simulatePrincipalPolicy(params: Map<string, string>): XmlObject {
    const source = params.get('PolicySourceArn');
    if (!source)
      throw new IamError(
        'ValidationError',
        "1 validation error detected: Value null at 'policySourceArn' failed to satisfy constraint: Member must not be null",
      );
    const actions = memberList(params, 'ActionNames');
    if (actions.length === 0)
      throw new IamError(
        'ValidationError',
        "1 validation error detected: Value null at 'actionNames' failed to satisfy constraint: Member must not be null",
      );
    const resources = memberList(params, 'ResourceArns');
    const maxItems = params.has('MaxItems') ? Number(params.get('MaxItems')) : 100;
    if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > 1000)
      throw new IamError(
        'ValidationError',
        `1 validation error detected: Value '${params.get('MaxItems')}' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 1000`,
      );
    const match = ROLE_ARN.exec(source);
    if (!match) throw new IamError('InvalidInput', `Invalid ARN: ${source}`);
    const [, , account, name] = match;
    const role =
      account === this.accountId() ? this.roles.find((r) => r.RoleName === name) : undefined;
    if (!role)
      throw new IamError('NoSuchEntity', `The role with name ${name} cannot be found.`, 404);

    const statements = role.Policies.flatMap((p) => p.PolicyDocument.Statement);
    const results: XmlObject[] = [];
    for (const action of actions)
      for (const resource of resources.length ? resources : ['*'])
        results.push({
          EvalActionName: action,
          EvalResourceName: resource,
          EvalDecision: decide(statements, action, resource),
          MatchedStatements: [],
          MissingContextValues: [],
        });
    const start = params.has('Marker') ? Number(params.get('Marker')) : 0;
    if (!Number.isInteger(start) || start < 0 || start > results.length)
      throw new IamError('InvalidInput', 'Invalid Marker');
    const page = results.slice(start, start + maxItems);
    const truncated = start + maxItems < results.length;
    return {
      SimulatePrincipalPolicyResult: {
        EvaluationResults: page,
        IsTruncated: truncated,
        ...(truncated ? { Marker: String(start + maxItems) } : {}),
      },
    };
  }
}

function memberList(params: Map<string, string>, name: string): string[] {
  const found: [number, string][] = [];
  for (const [key, value] of params) {
    const m = new RegExp(`^${name}\\.member\\.(\\d+)$`).exec(key);
    if (m) found.push([Number(m[1]), value]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, v]) => v);
}

const asList = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

function wildcard(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = [...pattern]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

function decide(
  statements: readonly IamWorldPolicyStatement[],
  action: string,
  resource: string,
): Decision {
  const matches = (s: IamWorldPolicyStatement) =>
    asList(s.Action).some((a) => wildcard(a, action, true)) &&
    asList(s.Resource).some((r) =>
      r === '*' || resource === '*' ? r === '*' : wildcard(r, resource, false),
    );
  if (statements.some((s) => s.Effect === 'Deny' && matches(s))) return 'explicitDeny';
  if (statements.some((s) => s.Effect === 'Allow' && matches(s))) return 'allowed';
  return 'implicitDeny';
}
