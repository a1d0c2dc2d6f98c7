import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';

function literal(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literal(f.value)]));
    case Kind.LIST:
      return node.values.map(literal);
    case Kind.NULL:
      return null;
    case Kind.VARIABLE:
    case Kind.ENUM:
      throw new TypeError(`JSON literals cannot contain ${node.kind}`);
  }
}

/** Arbitrary JSON, for Kubernetes specs whose schema lives in the CRD, not in GraphQL. */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'A JSON value (objects carry Kubernetes specs validated against the real CRDs).',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literal,
});
