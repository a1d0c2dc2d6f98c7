import { findUnstorableText, unstorableTextReason } from '@fleet/contracts';
import { GraphQLError, Kind, visit, type ASTNode, type DocumentNode } from 'graphql';

type Variables = Record<string, unknown>;

const refusal = (field: string, reason: string) =>
  new GraphQLError(`${field}: ${reason}`, {
    extensions: { code: 'BAD_USER_INPUT', field, reason, http: { status: 400 } },
  });

/**
 * Strings PostgreSQL cannot store (NUL, unpaired surrogates) and `__proto__` keys, which
 * validation drops without a word, anywhere in an operation's input — variables and literals —
 * refused before anything runs, naming where (see @fleet/contracts storable-text). Checked once
 * here rather than in each resolver, so that no new argument can forget it: an abort reason with
 * an unpaired surrogate was an internal error from Prisma.
 */
export function unstorableInputErrors(
  document: DocumentNode,
  variables: Variables | null | undefined,
): GraphQLError[] {
  const errors: GraphQLError[] = [];
  for (const [name, value] of Object.entries(variables ?? {})) {
    const found = findUnstorableText(value, [name]);
    if (found) errors.push(refusal(pathName(found.path), found.reason));
  }
  visit(document, {
    // `ancestors` stops above `parent`: the argument or field holding the value is the parent.
    StringValue(node, _key, parent, _path, ancestors) {
      const reason = unstorableTextReason(node.value);
      if (reason) errors.push(refusal(literalPath([...ancestors, parent as ASTNode]), reason));
    },
    ObjectField(node, _key, parent, _path, ancestors) {
      if (node.name.value === '__proto__')
        errors.push(
          refusal(
            literalPath([...ancestors, parent as ASTNode, node]),
            'cannot be a key: validation drops "__proto__" without a word',
          ),
        );
    },
  });
  return errors;
}

const pathName = (path: (string | number)[]) =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');

/** `argument.field.field` of a literal, from the nodes above it. */
function literalPath(ancestors: readonly (ASTNode | readonly ASTNode[])[]): string {
  const names: string[] = [];
  for (const a of ancestors) {
    if (Array.isArray(a) || !('kind' in a)) continue;
    const node = a;
    if (node.kind === Kind.ARGUMENT || node.kind === Kind.OBJECT_FIELD) names.push(node.name.value);
  }
  return names.join('.') || 'query';
}
