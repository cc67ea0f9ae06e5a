// The template's values that CloudFormation resolves at deploy time (Ref, Fn::GetAtt), mapped to
// what stands for those resources here, by logical id: the queues' URLs and ARNs on the embedded
// SQS server, the render bucket's name, the hint-key secret's ARN on the local Secrets Manager
// stand-in. A value the map does not know fails, naming the variable and the value.
export interface LocalResource {
  /** What { Ref: id } resolves to (a queue's URL, a bucket's name, a secret's ARN). */
  readonly ref?: string;
  /** Fn::GetAtt attributes, e.g. { Arn: … }. */
  readonly attributes?: Readonly<Record<string, string>>;
}

export class ResolveError extends Error {
  override name = 'ResolveError';
}

export function resolveValue(
  value: unknown,
  resources: Readonly<Record<string, LocalResource>>,
  what: string,
): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const object = value as Record<string, unknown> | null;
  if (object !== null && typeof object === 'object') {
    if (typeof object['Ref'] === 'string') {
      const ref = resources[object['Ref']]?.ref;
      if (ref !== undefined) return ref;
      throw new ResolveError(`${what}: { Ref: ${object['Ref']} } names a resource with no local stand-in`);
    }
    const getAtt = object['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string' && typeof getAtt[1] === 'string') {
      const attribute = resources[getAtt[0]]?.attributes?.[getAtt[1]];
      if (attribute !== undefined) return attribute;
      throw new ResolveError(
        `${what}: { Fn::GetAtt: [${getAtt[0]}, ${getAtt[1]}] } names a resource with no local stand-in`,
      );
    }
    const join = object['Fn::Join'];
    if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
      return (join[1] as unknown[]).map((part) => resolveValue(part, resources, what)).join(join[0]);
    }
  }
  throw new ResolveError(`${what}: ${JSON.stringify(value)} cannot be resolved here`);
}

/** Environment.Variables with every value resolved. */
export function resolveEnvironment(
  environment: Readonly<Record<string, unknown>>,
  resources: Readonly<Record<string, LocalResource>>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).map(([name, value]) => [name, resolveValue(value, resources, name)]),
  );
}
