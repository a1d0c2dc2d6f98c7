import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';

/** A syntactically valid value of a type, so a request reaches the resolver (and its guard). */
export function sampleValue(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sampleValue(type.ofType);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0]!.value;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((f) => isNonNullType(f.type))
        .map((f) => [f.name, sampleValue(f.type)]),
    );
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
        return 1;
      case 'Float':
        return 1.5;
      case 'Boolean':
        return true;
      case 'JSON':
        return {};
      case 'DateTime':
        return new Date(Date.now() + 86_400_000).toISOString();
      case 'ID':
        return '00000000-0000-4000-8000-000000000000';
      default:
        return 'sample';
    }
  }
  throw new Error(`no sample for ${String(type)}`);
}

/** `name(arg: $arg ...) { __typename }` with variables for every argument. */
export function operationFor(
  kind: 'query' | 'mutation' | 'subscription',
  field: GraphQLField<unknown, unknown>,
) {
  const args = field.args;
  const defs = args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
  const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
  const named = getNamedType(field.type);
  const selection = isObjectType(named) || isInterfaceType(named) ? ' { __typename }' : '';
  return {
    query: `${kind} Walk${defs ? `(${defs})` : ''} { ${field.name}${call}${selection} }`,
    variables: Object.fromEntries(
      args.filter((a) => isNonNullType(a.type)).map((a) => [a.name, sampleValue(a.type)]),
    ),
  };
}

export function rootFields(schema: GraphQLSchema) {
  return {
    query: Object.values(schema.getQueryType()?.getFields() ?? {}),
    mutation: Object.values(schema.getMutationType()?.getFields() ?? {}),
    subscription: Object.values(schema.getSubscriptionType()?.getFields() ?? {}),
  };
}
