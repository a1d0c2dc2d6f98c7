import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { IAM_API_VERSION, IAM_XMLNS, IamError, IamService } from './iam.js';
import { verifySigV4, type SigV4Credentials } from './sigv4.js';
import type {
  Ec2InstanceStateName,
  Ec2Tags,
  Ec2World,
  Ec2WorldImage,
  Ec2WorldInstance,
  Ec2WorldInstanceProfile,
  Ec2WorldInstanceType,
  Ec2WorldSecurityGroup,
  Ec2WorldSubnet,
  Ec2WorldVpc,
  IamWorldRole,
  SqsWorldQueue,
} from './world.js';
import { DEFAULT_INSTANCE_TYPES } from './world.js';
import { renderXml, type XmlObject, type XmlValue } from './xml.js';

const XMLNS = 'http://ec2.amazonaws.com/doc/2016-11-15/';

export const INSTANCE_STATE_CODES: Record<Ec2InstanceStateName, number> = {
  pending: 0,
  running: 16,
  'shutting-down': 32,
  terminated: 48,
  stopping: 64,
  stopped: 80,
};

/** One request as the emulator saw it, for asserting call counts and batching. */
export interface Ec2RequestRecord {
  action: string;
  params: Record<string, string>;
  /** The EC2 error code returned, if the request failed. */
  errorCode?: string;
}

export interface Ec2InjectedError {
  code: string;
  message?: string;
  /** HTTP status; 5xx and throttling codes make the SDK retry. Default 400. */
  status?: number;
  /** How many matching requests fail before the action works again. Default 1. */
  times?: number;
}

export interface Ec2EmulatorOptions {
  region?: string;
  accountId?: string;
  credentials?: SigV4Credentials;
}

/** A launch template: its first version's data kept as the query sent it (flattened). */
export interface Ec2LaunchTemplate {
  LaunchTemplateId: string;
  LaunchTemplateName: string;
  CreateTime: string;
  Tags: Ec2Tags;
  Data: Record<string, string>;
}

/** An instance as the emulator holds it: every field EC2 always reports is present. */
export interface Ec2Instance extends Ec2WorldInstance {
  InstanceType: string;
  ImageId: string;
  PrivateDnsName: string;
  PrivateIpAddress: string;
  State: Ec2InstanceStateName;
  LaunchTime: string;
  ReservationId: string;
  Tags: Ec2Tags;
}

export class Ec2Error extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

type FilterTable<T> = Record<string, (item: T) => (string | undefined)[]>;

interface DescribeSpec<T> {
  action: string;
  items: T[];
  idOf: (item: T) => string;
  /**
   * Query list parameter holding explicit ids, e.g. `SubnetId` for SubnetId.N; undefined when the
   * action checks its names itself (instance types are names, not ids).
   */
  idParam?: string;
  idPrefix: string;
  malformedCode: string;
  notFoundCode: string;
  notFoundMessage: (missing: string[]) => string;
  filters: FilterTable<T>;
  maxResults: { min: number; max: number };
  /** Real EC2 refuses MaxResults together with an explicit id list for some actions. */
  maxResultsExcludesIds?: string;
}

/**
 * An EC2 Query-protocol endpoint on 127.0.0.1 that the real @aws-sdk/client-ec2 can talk to:
 * SigV4-verified, with EC2's filters, id lists, paging limits, XML shapes and error codes for
 * the Describe calls the sidecar makes. The world lives in memory and tests mutate it directly.
 */
export class Ec2Emulator {
  readonly credentials: SigV4Credentials;
  readonly requestLog: Ec2RequestRecord[] = [];

  private server: Server | undefined;
  private port: number | undefined;
  private regionName: string;
  private accountId: string;
  private vpcs: Ec2WorldVpc[] = [];
  private subnets: Ec2WorldSubnet[] = [];
  private securityGroups: Ec2WorldSecurityGroup[] = [];
  private images: Ec2WorldImage[] = [];
  private instanceProfiles: Ec2WorldInstanceProfile[] = [];
  private instances: Ec2Instance[] = [];
  private launchTemplates: Ec2LaunchTemplate[] = [];
  private queues: SqsWorldQueue[] = [];
  private instanceTypes: Ec2WorldInstanceType[] = [];
  private readonly iam = new IamService(() => this.accountId);
  private injected: (Ec2InjectedError & { action: string; remaining: number })[] = [];
  private stalls: { action: string; remaining: number; stalled: number }[] = [];
  private ipCounter = 0;

  constructor(world: Ec2World = {}, options: Ec2EmulatorOptions = {}) {
    this.regionName = options.region ?? world.region ?? 'us-east-1';
    this.accountId = options.accountId ?? world.accountId ?? '111122223333';
    this.credentials = options.credentials ?? {
      accessKeyId: `AKIAEMULATOR${randomBytes(4).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(20).toString('base64'),
    };
    this.seed(world);
  }

  get region(): string {
    return this.regionName;
  }

  get url(): string {
    if (this.port === undefined) throw new Error('Ec2Emulator is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  /** Everything an EC2Client needs: `new EC2Client({ ...emulator.clientConfig(), maxAttempts: 1 })`. */
  clientConfig(): { endpoint: string; region: string; credentials: SigV4Credentials } {
    return { endpoint: this.url, region: this.region, credentials: { ...this.credentials } };
  }

  /** The action names of every request received so far, in order. */
  get actions(): string[] {
    return this.requestLog.map((r) => r.action);
  }

  clearRequestLog(): void {
    this.requestLog.length = 0;
  }

  /** Replaces the whole world; the region and account follow the world when it names them. */
  seed(world: Ec2World): void {
    this.launchTemplates = [];
    if (world.region !== undefined) this.regionName = world.region;
    if (world.accountId !== undefined) this.accountId = world.accountId;
    this.vpcs = structuredClone(world.vpcs ?? []);
    this.subnets = structuredClone(world.subnets ?? []);
    this.securityGroups = structuredClone(world.securityGroups ?? []);
    this.images = structuredClone(world.images ?? []);
    this.instanceProfiles = structuredClone(world.instanceProfiles ?? []);
    this.instances = [];
    for (const instance of world.instances ?? []) this.addInstance(instance);
    this.queues = structuredClone(world.queues ?? []);
    this.instanceTypes = structuredClone([...(world.instanceTypes ?? DEFAULT_INSTANCE_TYPES)]);
    this.iam.seed(world.roles);
  }

  /** Adds an IAM role, or replaces its policies. */
  putRole(role: IamWorldRole): void {
    this.iam.putRole(role);
  }

  /** The ARN of a role of the world's account. */
  roleArn(roleName: string): string {
    return this.iam.roleArn(roleName);
  }

  addQueue(queue: SqsWorldQueue): void {
    this.queues.push(structuredClone(queue));
  }

  removeQueue(queueName: string): void {
    this.queues = this.queues.filter((q) => q.QueueName !== queueName);
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.sendError(res, new Ec2Error('InternalError', String(err), 500));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.port = undefined;
    // The SDK keeps connections alive; without this close() would wait for them to idle out.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- in-process mutators -------------------------------------------------------------

  addInstance(input: Partial<Ec2WorldInstance> = {}): Ec2Instance {
    const instanceId = input.InstanceId ?? `i-${randomBytes(9).toString('hex').slice(0, 17)}`;
    if (this.instances.some((i) => i.InstanceId === instanceId)) {
      throw new Error(`instance ${instanceId} already exists`);
    }
    const subnet = this.subnets.find((s) => s.SubnetId === input.SubnetId);
    const privateIp = input.PrivateIpAddress ?? this.allocateIp(subnet);
    const instance: Ec2Instance = {
      ...structuredClone(input),
      InstanceId: instanceId,
      InstanceType: input.InstanceType ?? 'm6i.large',
      ImageId: input.ImageId ?? this.images[0]?.ImageId ?? 'ami-00000000000000000',
      PrivateIpAddress: privateIp,
      PrivateDnsName: input.PrivateDnsName ?? this.privateDnsName(privateIp),
      State: input.State ?? 'running',
      LaunchTime: input.LaunchTime ?? new Date().toISOString(),
      ReservationId: input.ReservationId ?? `r-${randomBytes(9).toString('hex').slice(0, 17)}`,
      Tags: { ...(input.Tags ?? {}) },
    };
    if (subnet) {
      instance.VpcId ??= subnet.VpcId;
      instance.AvailabilityZone ??= subnet.AvailabilityZone;
    }
    this.instances.push(instance);
    return structuredClone(instance);
  }

  setInstanceState(instanceId: string, state: Ec2InstanceStateName): void {
    this.requireInstance(instanceId).State = state;
  }

  setInstanceTags(instanceId: string, tags: Ec2Tags): void {
    this.requireInstance(instanceId).Tags = { ...tags };
  }

  /** Forgets the instance entirely (EC2 does this about an hour after termination). */
  removeInstance(instanceId: string): void {
    this.requireInstance(instanceId);
    this.instances = this.instances.filter((i) => i.InstanceId !== instanceId);
  }

  getInstance(instanceId: string): Ec2Instance | undefined {
    const found = this.instances.find((i) => i.InstanceId === instanceId);
    return found && structuredClone(found);
  }

  listInstances(): Ec2Instance[] {
    return structuredClone(this.instances);
  }

  /** A type of the region's catalogue, as DescribeInstanceTypes describes it. */
  instanceType(name: string): Ec2WorldInstanceType | undefined {
    const found = this.instanceTypes.find((t) => t.InstanceType === name);
    return found && structuredClone(found);
  }

  addSubnet(subnet: Ec2WorldSubnet): void {
    this.subnets.push(structuredClone(subnet));
  }

  removeSubnet(subnetId: string): void {
    this.subnets = this.subnets.filter((s) => s.SubnetId !== subnetId);
  }

  addSecurityGroup(group: Ec2WorldSecurityGroup): void {
    this.securityGroups.push(structuredClone(group));
  }

  removeSecurityGroup(groupId: string): void {
    this.securityGroups = this.securityGroups.filter((g) => g.GroupId !== groupId);
  }

  addImage(image: Ec2WorldImage): void {
    this.images.push(structuredClone(image));
  }

  removeImage(imageId: string): void {
    this.images = this.images.filter((i) => i.ImageId !== imageId);
  }

  /**
   * The next `times` requests for `action` are read and never answered, as by an endpoint that
   * hangs; stop() closes their connections. Returns how many have been held so far.
   */
  stall(action: string, times = 1): () => number {
    const stall = { action, remaining: times, stalled: 0 };
    this.stalls.push(stall);
    return () => stall.stalled;
  }

  /** Makes the next `times` requests for `action` fail with the given EC2 error. */
  injectError(action: string, error: Ec2InjectedError): void {
    this.injected.push({ ...error, action, remaining: error.times ?? 1 });
  }

  // ---- HTTP ------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    // SQS speaks AWS JSON 1.0 (the operation in X-Amz-Target) on the same port; EC2 speaks the
    // query protocol. Point AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_EC2 here alike.
    const target = req.headers['x-amz-target'];
    if (typeof target === 'string' && target.startsWith('AmazonSQS.')) {
      this.handleSqs(req, res, target.slice('AmazonSQS.'.length), body);
      return;
    }
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const params = new Map<string, string>(url.searchParams);
    if (req.method === 'POST') {
      for (const [k, v] of new URLSearchParams(body.toString('utf8'))) params.set(k, v);
    }
    const action = params.get('Action') ?? '';
    // IAM speaks the same query protocol on this port (global service, signed as `iam`).
    if (params.get('Version') === IAM_API_VERSION) {
      this.handleIam(req, res, action, params, body);
      return;
    }
    const record: Ec2RequestRecord = { action, params: Object.fromEntries(params) };
    this.requestLog.push(record);

    try {
      if (req.method !== 'POST' && req.method !== 'GET') {
        throw new Ec2Error('InvalidHttpRequest', `The HTTP method ${req.method} is not supported.`);
      }
      const rejection = verifySigV4(
        { method: req.method, url: req.url ?? '/', rawHeaders: req.rawHeaders, body },
        { credentials: this.credentials, region: this.regionName, service: 'ec2' },
      );
      if (rejection) throw new Ec2Error(rejection.code, rejection.message, rejection.status);
      if (action === '')
        throw new Ec2Error('MissingAction', 'The request must contain the parameter Action');
      if (!params.has('Version')) {
        throw new Ec2Error('MissingParameter', 'The request must contain the parameter Version');
      }
      const stall = this.stalls.find((s) => s.action === action && s.remaining > 0);
      if (stall) {
        stall.remaining -= 1;
        stall.stalled += 1;
        return;
      }
      const injected = this.injected.find((e) => e.action === action && e.remaining > 0);
      if (injected) {
        injected.remaining -= 1;
        throw new Ec2Error(
          injected.code,
          injected.message ?? `Injected ${injected.code} for ${action}`,
          injected.status ?? 400,
        );
      }
      const payload = this.dispatch(action, params);
      const requestId = randomUUID();
      const xml =
        `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${XMLNS}">` +
        `<requestId>${requestId}</requestId>${renderXml(payload)}</${action}Response>`;
      res.writeHead(200, {
        'content-type': 'text/xml;charset=UTF-8',
        'x-amzn-requestid': requestId,
        date: new Date().toUTCString(),
      });
      res.end(xml);
    } catch (err) {
      const error = err instanceof Ec2Error ? err : new Ec2Error('InternalError', String(err), 500);
      record.errorCode = error.code;
      this.sendError(res, error);
    }
  }

  // ---- IAM (query protocol, `member` lists, ErrorResponse) -----------------------------------

  private handleIam(
    req: IncomingMessage,
    res: ServerResponse,
    action: string,
    params: Map<string, string>,
    body: Buffer,
  ): void {
    const record: Ec2RequestRecord = {
      action: `iam:${action}`,
      params: Object.fromEntries(params),
    };
    this.requestLog.push(record);
    const requestId = randomUUID();
    try {
      if (req.method !== 'POST') throw new IamError('InvalidHttpRequest', 'POST only');
      const rejection = verifySigV4(
        { method: req.method, url: req.url ?? '/', rawHeaders: req.rawHeaders, body },
        { credentials: this.credentials, region: this.regionName, service: 'iam' },
      );
      if (rejection) throw new IamError(rejection.code, rejection.message, rejection.status);
      const injected = this.injected.find((e) => e.action === `iam:${action}` && e.remaining > 0);
      if (injected) {
        injected.remaining -= 1;
        throw new IamError(
          injected.code,
          injected.message ?? `Injected ${injected.code} for ${action}`,
          injected.status ?? 400,
        );
      }
      const payload = this.iam.dispatch(action, params);
      res.writeHead(200, {
        'content-type': 'text/xml',
        'x-amzn-requestid': requestId,
        date: new Date().toUTCString(),
      });
      res.end(
        `<${action}Response xmlns="${IAM_XMLNS}">${renderXml(payload, 'member')}` +
          `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`,
      );
    } catch (err) {
      const error =
        err instanceof IamError ? err : new IamError('ServiceFailure', String(err), 500);
      record.errorCode = error.code;
      if (res.headersSent) return;
      res.writeHead(error.status, {
        'content-type': 'text/xml',
        'x-amzn-requestid': requestId,
        date: new Date().toUTCString(),
      });
      res.end(
        `<ErrorResponse xmlns="${IAM_XMLNS}"><Error>` +
          renderXml({
            Type: error.status >= 500 ? 'Receiver' : 'Sender',
            Code: error.code,
            Message: error.message,
          }) +
          `</Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
      );
    }
  }

  // ---- SQS (AWS JSON 1.0, awsQueryCompatible) ---------------------------------------------

  private handleSqs(req: IncomingMessage, res: ServerResponse, action: string, body: Buffer): void {
    const record: Ec2RequestRecord = { action: `sqs:${action}`, params: {} };
    this.requestLog.push(record);
    try {
      if (req.method !== 'POST')
        throw new SqsError('InvalidAction', 'AWS.SimpleQueueService.InvalidAction', 'POST only');
      const rejection = verifySigV4(
        { method: req.method, url: req.url ?? '/', rawHeaders: req.rawHeaders, body },
        { credentials: this.credentials, region: this.regionName, service: 'sqs' },
      );
      if (rejection)
        throw new SqsError(rejection.code, rejection.code, rejection.message, rejection.status);
      if (req.headers['content-type'] !== 'application/x-amz-json-1.0')
        throw new SqsError(
          'UnsupportedMediaType',
          'UnsupportedMediaType',
          `content type ${String(req.headers['content-type'])} is not application/x-amz-json-1.0`,
          415,
        );
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        throw new SqsError('SerializationException', 'SerializationException', 'malformed JSON');
      }
      record.params = Object.fromEntries(
        Object.entries(input).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
      );
      const output = this.dispatchSqs(action, input);
      const requestId = randomUUID();
      res.writeHead(200, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': requestId,
        date: new Date().toUTCString(),
      });
      res.end(JSON.stringify(output));
    } catch (err) {
      const error =
        err instanceof SqsError
          ? err
          : new SqsError('InternalError', 'InternalError', String(err), 500);
      record.errorCode = error.code;
      if (res.headersSent) return;
      res.writeHead(error.status, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': randomUUID(),
        // What lets the SDK (awsQueryCompatible) name the error with its query-protocol code.
        'x-amzn-query-error': `${error.queryCode};${error.status >= 500 ? 'Receiver' : 'Sender'}`,
        date: new Date().toUTCString(),
      });
      res.end(
        JSON.stringify({ __type: `com.amazonaws.sqs#${error.code}`, message: error.message }),
      );
    }
  }

  private queueUrl(name: string): string {
    return `${this.url}/${this.accountId}/${name}`;
  }

  private queueByUrl(url: unknown): SqsWorldQueue {
    const queue =
      typeof url === 'string'
        ? this.queues.find((q) => this.queueUrl(q.QueueName) === url)
        : undefined;
    if (!queue) throw queueDoesNotExist();
    return queue;
  }

  private dispatchSqs(action: string, input: Record<string, unknown>): Record<string, unknown> {
    switch (action) {
      case 'GetQueueUrl': {
        const name = input.QueueName;
        if (typeof name !== 'string' || name === '')
          throw new SqsError(
            'MissingParameter',
            'AWS.SimpleQueueService.MissingParameter',
            'The request must contain the parameter QueueName.',
          );
        if (
          input.QueueOwnerAWSAccountId !== undefined &&
          input.QueueOwnerAWSAccountId !== this.accountId
        )
          throw queueDoesNotExist();
        if (!this.queues.some((q) => q.QueueName === name)) throw queueDoesNotExist();
        return { QueueUrl: this.queueUrl(name) };
      }
      case 'GetQueueAttributes': {
        const queue = this.queueByUrl(input.QueueUrl);
        const names = Array.isArray(input.AttributeNames) ? (input.AttributeNames as string[]) : [];
        const all: Record<string, string> = {
          QueueArn: `arn:aws:sqs:${this.regionName}:${this.accountId}:${queue.QueueName}`,
          ApproximateNumberOfMessages: '0',
          VisibilityTimeout: '30',
          MessageRetentionPeriod: '300',
        };
        const wanted = names.includes('All') ? Object.keys(all) : names;
        for (const n of wanted)
          if (!(n in all))
            throw new SqsError(
              'InvalidAttributeName',
              'InvalidAttributeName',
              `Unknown Attribute ${n}.`,
            );
        return { Attributes: Object.fromEntries(wanted.map((n) => [n, all[n]!])) };
      }
      default:
        throw new SqsError(
          'InvalidAction',
          'AWS.SimpleQueueService.InvalidAction',
          `The action ${action} is not valid for this endpoint.`,
        );
    }
  }

  private sendError(res: ServerResponse, error: Ec2Error): void {
    const requestId = randomUUID();
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>` +
      renderXml({ Code: error.code, Message: error.message }) +
      `</Error></Errors><RequestID>${requestId}</RequestID></Response>`;
    if (res.headersSent) return;
    res.writeHead(error.status, {
      'content-type': 'text/xml;charset=UTF-8',
      'x-amzn-requestid': requestId,
      date: new Date().toUTCString(),
    });
    res.end(xml);
  }

  /** The EC2 actions served, by name. */
  private readonly handlers: Record<string, (params: Map<string, string>) => XmlObject> = {
    DescribeSubnets: (p) => this.describeSubnets(p),
    DescribeSecurityGroups: (p) => this.describeSecurityGroups(p),
    DescribeImages: (p) => this.describeImages(p),
    DescribeInstances: (p) => this.describeInstances(p),
    DescribeInstanceTypes: (p) => this.describeInstanceTypes(p),
    DescribeInstanceTypeOfferings: (p) => this.describeInstanceTypeOfferings(p),
    DescribeLaunchTemplates: (p) => this.describeLaunchTemplates(p),
    CreateLaunchTemplate: (p) => this.createLaunchTemplate(p),
    DeleteLaunchTemplate: (p) => this.deleteLaunchTemplate(p),
    DescribeSpotPriceHistory: (p) => this.describeSpotPriceHistory(p),
    DescribeInstanceStatus: (p) => this.describeInstanceStatus(p),
    CreateFleet: (p) => this.createFleet(p),
    CreateTags: (p) => this.createTags(p),
    TerminateInstances: (p) => this.terminateInstances(p),
  };

  /** Served only as dry runs: Karpenter's EC2NodeClass validation asks whether it could launch. */
  private static readonly DRY_RUN_ONLY = new Set(['RunInstances']);

  private dispatch(action: string, params: Map<string, string>): XmlObject {
    const handler = this.handlers[action];
    if (params.get('DryRun') === 'true') {
      if (!handler && !Ec2Emulator.DRY_RUN_ONLY.has(action)) throw invalidAction(action);
      throw new Ec2Error(
        'DryRunOperation',
        'Request would have succeeded, but DryRun flag is set.',
        412,
      );
    }
    if (!handler) throw invalidAction(action);
    return handler(params);
  }

  // ---- actions ---------------------------------------------------------------------------

  private describeSubnets(params: Map<string, string>): XmlObject {
    const page = describe(params, {
      action: 'DescribeSubnets',
      items: this.subnets,
      idOf: (s) => s.SubnetId,
      idParam: 'SubnetId',
      idPrefix: 'subnet',
      malformedCode: 'InvalidSubnetID.Malformed',
      notFoundCode: 'InvalidSubnetID.NotFound',
      notFoundMessage: (ids) => notFound('subnet ID', ids),
      maxResults: { min: 5, max: 1000 },
      filters: {
        'availability-zone': (s) => [s.AvailabilityZone],
        availabilityZone: (s) => [s.AvailabilityZone],
        'availability-zone-id': (s) => [s.AvailabilityZoneId],
        'available-ip-address-count': (s) => [String(s.AvailableIpAddressCount ?? 0)],
        'cidr-block': (s) => [s.CidrBlock],
        cidrBlock: (s) => [s.CidrBlock],
        'default-for-az': (s) => [String(s.DefaultForAz ?? false)],
        'map-public-ip-on-launch': (s) => [String(s.MapPublicIpOnLaunch ?? false)],
        'owner-id': () => [this.accountId],
        state: (s) => [s.State ?? 'available'],
        'subnet-arn': (s) => [this.arn('subnet', s.SubnetId)],
        'subnet-id': (s) => [s.SubnetId],
        'vpc-id': (s) => [s.VpcId],
        ...tagFilters((s: Ec2WorldSubnet) => s.Tags),
      },
    });
    return {
      subnetSet: page.items.map((s) => ({
        subnetId: s.SubnetId,
        subnetArn: this.arn('subnet', s.SubnetId),
        state: s.State ?? 'available',
        vpcId: s.VpcId,
        ownerId: this.accountId,
        cidrBlock: s.CidrBlock,
        availableIpAddressCount: s.AvailableIpAddressCount ?? 0,
        availabilityZone: s.AvailabilityZone,
        availabilityZoneId: s.AvailabilityZoneId,
        defaultForAz: s.DefaultForAz ?? false,
        mapPublicIpOnLaunch: s.MapPublicIpOnLaunch ?? false,
        tagSet: tagSet(s.Tags),
      })),
      nextToken: page.nextToken,
    };
  }

  private describeSecurityGroups(params: Map<string, string>): XmlObject {
    const names = listParam(params, 'GroupName');
    const missingNames = names.filter((n) => !this.securityGroups.some((g) => g.GroupName === n));
    if (missingNames.length > 0) {
      throw new Ec2Error(
        'InvalidGroup.NotFound',
        `The security group '${missingNames.join(', ')}' does not exist`,
      );
    }
    const byName =
      names.length > 0
        ? this.securityGroups.filter((g) => names.includes(g.GroupName))
        : this.securityGroups;
    const page = describe(params, {
      action: 'DescribeSecurityGroups',
      items: byName,
      idOf: (g) => g.GroupId,
      idParam: 'GroupId',
      idPrefix: 'sg',
      malformedCode: 'InvalidGroupId.Malformed',
      notFoundCode: 'InvalidGroup.NotFound',
      notFoundMessage: (ids) =>
        ids.length === 1
          ? `The security group '${ids[0]}' does not exist`
          : `The security groups '${ids.join(', ')}' do not exist`,
      maxResults: { min: 5, max: 1000 },
      maxResultsExcludesIds: 'groupIdSet',
      filters: {
        description: (g) => [g.Description ?? g.GroupName],
        'group-id': (g) => [g.GroupId],
        'group-name': (g) => [g.GroupName],
        'owner-id': () => [this.accountId],
        'vpc-id': (g) => [g.VpcId],
        ...tagFilters((g: Ec2WorldSecurityGroup) => g.Tags),
      },
    });
    return {
      securityGroupInfo: page.items.map((g) => ({
        ownerId: this.accountId,
        groupId: g.GroupId,
        groupName: g.GroupName,
        groupDescription: g.Description ?? g.GroupName,
        vpcId: g.VpcId,
        securityGroupArn: this.arn('security-group', g.GroupId),
        ipPermissions: [],
        ipPermissionsEgress: [],
        tagSet: tagSet(g.Tags),
      })),
      nextToken: page.nextToken,
    };
  }

  private describeImages(params: Map<string, string>): XmlObject {
    const owners = listParam(params, 'Owner');
    const includeDisabled = params.get('IncludeDisabled') === 'true';
    const visible = this.images.filter((image) => {
      const state = image.State ?? 'available';
      if (state === 'deregistered') return false;
      if (state === 'disabled' && !includeDisabled) return false;
      if (owners.length === 0) return true;
      const ownerId = image.OwnerId ?? this.accountId;
      return owners.some(
        (o) =>
          (o === 'self' && ownerId === this.accountId) ||
          o === ownerId ||
          (o === image.OwnerAlias && o !== undefined),
      );
    });
    const page = describe(params, {
      action: 'DescribeImages',
      items: visible,
      idOf: (i) => i.ImageId,
      idParam: 'ImageId',
      idPrefix: 'ami',
      malformedCode: 'InvalidAMIID.Malformed',
      notFoundCode: 'InvalidAMIID.NotFound',
      notFoundMessage: (ids) => `The image id '[${ids.join(', ')}]' does not exist`,
      maxResults: { min: 5, max: 1000 },
      filters: {
        architecture: (i) => [i.Architecture ?? 'x86_64'],
        description: (i) => [i.Description],
        'image-id': (i) => [i.ImageId],
        'image-type': () => ['machine'],
        'is-public': (i) => [String(i.Public ?? false)],
        name: (i) => [i.Name],
        'owner-alias': (i) => [i.OwnerAlias],
        'owner-id': (i) => [i.OwnerId ?? this.accountId],
        'root-device-type': () => ['ebs'],
        state: (i) => [i.State ?? 'available'],
        'virtualization-type': () => ['hvm'],
        ...tagFilters((i: Ec2WorldImage) => i.Tags),
      },
    });
    return {
      imagesSet: page.items.map((i) => ({
        imageId: i.ImageId,
        imageLocation: `${i.OwnerId ?? this.accountId}/${i.Name ?? i.ImageId}`,
        imageState: i.State ?? 'available',
        imageOwnerId: i.OwnerId ?? this.accountId,
        imageOwnerAlias: i.OwnerAlias,
        creationDate: i.CreationDate,
        isPublic: i.Public ?? false,
        architecture: i.Architecture ?? 'x86_64',
        imageType: 'machine',
        name: i.Name,
        description: i.Description,
        rootDeviceType: 'ebs',
        rootDeviceName: i.RootDeviceName ?? '/dev/xvda',
        blockDeviceMapping: [
          {
            deviceName: i.RootDeviceName ?? '/dev/xvda',
            ebs: { deleteOnTermination: true, volumeSize: 16, volumeType: 'gp3', encrypted: false },
          },
        ],
        virtualizationType: 'hvm',
        hypervisor: 'xen',
        enaSupport: true,
        platformDetails: 'Linux/UNIX',
        usageOperation: 'RunInstances',
        tagSet: tagSet(i.Tags),
      })),
      nextToken: page.nextToken,
    };
  }

  private describeInstances(params: Map<string, string>): XmlObject {
    const page = describe(params, {
      action: 'DescribeInstances',
      items: this.instances,
      ...INSTANCE_IDS,
      maxResults: { min: 5, max: 1000 },
      maxResultsExcludesIds: 'instanceIds',
      filters: {
        'availability-zone': (i) => [i.AvailabilityZone],
        'iam-instance-profile.arn': (i) => [this.instanceProfileArn(i.IamInstanceProfile)],
        'image-id': (i) => [i.ImageId],
        'instance-id': (i) => [i.InstanceId],
        'instance-state-code': (i) => [String(INSTANCE_STATE_CODES[i.State])],
        'instance-state-name': (i) => [i.State],
        'instance-type': (i) => [i.InstanceType],
        'instance.group-id': (i) => i.SecurityGroupIds ?? [],
        'network-interface.addresses.private-ip-address': (i) => [i.PrivateIpAddress],
        'owner-id': () => [this.accountId],
        'private-dns-name': (i) => [i.PrivateDnsName],
        'private-ip-address': (i) => [i.PrivateIpAddress],
        'reservation-id': (i) => [i.ReservationId],
        'subnet-id': (i) => [i.SubnetId],
        'vpc-id': (i) => [i.VpcId],
        ...tagFilters((i: Ec2Instance) => i.Tags),
      },
    });
    // Paging counts instances; consecutive instances of one reservation share an item.
    const reservations: { id: string; instances: Ec2Instance[] }[] = [];
    for (const instance of page.items) {
      const last = reservations.at(-1);
      if (last && last.id === instance.ReservationId) last.instances.push(instance);
      else reservations.push({ id: instance.ReservationId, instances: [instance] });
    }
    return {
      reservationSet: reservations.map((r) => ({
        reservationId: r.id,
        ownerId: this.accountId,
        groupSet: [],
        instancesSet: r.instances.map((i) => this.renderInstance(i)),
      })),
      nextToken: page.nextToken,
    };
  }

  private describeInstanceTypes(params: Map<string, string>): XmlObject {
    // Instance type names are not ids: an unknown one is InvalidInstanceType, listing them all.
    const names = listParam(params, 'InstanceType');
    const unknown = names.filter((n) => !this.instanceTypes.some((t) => t.InstanceType === n));
    if (unknown.length > 0) {
      throw new Ec2Error(
        'InvalidInstanceType',
        `The following supplied instance types do not exist: [${unknown.join(', ')}]`,
      );
    }
    const page = describe(params, {
      action: 'DescribeInstanceTypes',
      items:
        names.length > 0
          ? this.instanceTypes.filter((t) => names.includes(t.InstanceType))
          : this.instanceTypes,
      idOf: (t) => t.InstanceType,
      idPrefix: 'none',
      malformedCode: 'InvalidInstanceType',
      notFoundCode: 'InvalidInstanceType',
      notFoundMessage: (ids) =>
        `The following supplied instance types do not exist: [${ids.join(', ')}]`,
      maxResults: { min: 5, max: 100 },
      filters: {
        'instance-type': (t) => [t.InstanceType],
        'current-generation': (t) => [String(t.CurrentGeneration ?? true)],
        'processor-info.supported-architecture': (t) => t.Architectures ?? ['x86_64'],
        'vcpu-info.default-vcpus': (t) => [String(t.VCpus)],
        'memory-info.size-in-mib': (t) => [String(t.MemoryMiB)],
        'instance-storage-supported': (t) => [String(t.InstanceStorageGB !== undefined)],
        // What the catalogue's types all are (below): Nitro, HVM, not bare metal, both classes.
        'supported-virtualization-type': () => ['hvm'],
        'supported-usage-class': () => ['on-demand', 'spot'],
        'bare-metal': () => ['false'],
        hypervisor: () => ['nitro'],
      },
    });
    return {
      instanceTypeSet: page.items.map((t) => ({
        instanceType: t.InstanceType,
        currentGeneration: t.CurrentGeneration ?? true,
        freeTierEligible: false,
        supportedUsageClasses: ['on-demand', 'spot'],
        supportedRootDeviceTypes: ['ebs'],
        supportedVirtualizationTypes: ['hvm'],
        bareMetal: false,
        hypervisor: 'nitro',
        processorInfo: { supportedArchitectures: t.Architectures ?? ['x86_64'] },
        vCpuInfo: { defaultVCpus: t.VCpus },
        memoryInfo: { sizeInMiB: t.MemoryMiB },
        instanceStorageSupported: t.InstanceStorageGB !== undefined,
        instanceStorageInfo:
          t.InstanceStorageGB === undefined
            ? undefined
            : {
                totalSizeInGB: t.InstanceStorageGB,
                disks: [{ sizeInGB: t.InstanceStorageGB, count: 1, type: 'ssd' }],
                nvmeSupport: 'required',
              },
        ebsInfo: {
          ebsOptimizedSupport: 'default',
          encryptionSupport: 'supported',
          nvmeSupport: 'required',
        },
        networkInfo: {
          networkPerformance: 'Up to 12.5 Gigabit',
          maximumNetworkInterfaces: t.MaximumNetworkInterfaces ?? 4,
          maximumNetworkCards: 1,
          defaultNetworkCardIndex: 0,
          // Karpenter reads the ENI limit from the default card (instancetype/types.go).
          networkCards: [
            {
              networkCardIndex: 0,
              networkPerformance: 'Up to 12.5 Gigabit',
              maximumNetworkInterfaces: t.MaximumNetworkInterfaces ?? 4,
            },
          ],
          ipv4AddressesPerInterface: t.Ipv4AddressesPerInterface ?? 15,
          ipv6AddressesPerInterface: t.Ipv4AddressesPerInterface ?? 15,
          ipv6Supported: true,
          enaSupport: 'required',
          efaSupported: false,
          encryptionInTransitSupported: false,
          enaSrdSupported: false,
        },
        gpuInfo:
          t.Gpus === undefined
            ? undefined
            : {
                gpus: t.Gpus.map((g) => ({
                  name: g.Name,
                  manufacturer: g.Manufacturer,
                  count: g.Count,
                  memoryInfo: { sizeInMiB: g.MemoryMiB },
                })),
                totalGpuMemoryInMiB: t.Gpus.reduce((sum, g) => sum + g.Count * g.MemoryMiB, 0),
              },
      })),
      nextToken: page.nextToken,
    };
  }

  /**
   * Every catalogue type is offered in the region and in each zone the world's subnets are in
   * (by name or by zone id, as LocationType asks).
   */
  private describeInstanceTypeOfferings(params: Map<string, string>): XmlObject {
    const locationType = params.get('LocationType') ?? 'region';
    const zones = [...new Map(this.subnets.map((s) => [s.AvailabilityZone, s])).values()];
    const locations: Record<string, string[]> = {
      region: [this.region],
      'availability-zone': zones.map((s) => s.AvailabilityZone),
      'availability-zone-id': zones.flatMap((s) =>
        s.AvailabilityZoneId === undefined ? [] : [s.AvailabilityZoneId],
      ),
    };
    const at = locations[locationType];
    if (!at)
      throw new Ec2Error(
        'InvalidParameterValue',
        `Value (${locationType}) for parameter locationType is invalid. Valid values: region, availability-zone, availability-zone-id, outpost.`,
      );
    const offerings = this.instanceTypes.flatMap((t) =>
      at.map((location) => ({ instanceType: t.InstanceType, location })),
    );
    const page = describe(params, {
      action: 'DescribeInstanceTypeOfferings',
      items: offerings,
      idOf: (o) => `${o.instanceType}@${o.location}`,
      idPrefix: 'none',
      malformedCode: 'InvalidParameterValue',
      notFoundCode: 'InvalidParameterValue',
      notFoundMessage: () => '',
      maxResults: { min: 5, max: 1000 },
      filters: {
        'instance-type': (o) => [o.instanceType],
        location: (o) => [o.location],
      },
    });
    return {
      instanceTypeOfferingSet: page.items.map((o) => ({ ...o, locationType })),
      nextToken: page.nextToken,
    };
  }

  /** Launch templates held, as DescribeLaunchTemplates lists them. */
  listLaunchTemplates(): readonly Ec2LaunchTemplate[] {
    return this.launchTemplates;
  }

  private describeLaunchTemplates(params: Map<string, string>): XmlObject {
    // Names are not ids: an unknown one is a NotFoundException, as EC2 answers it.
    const names = listParam(params, 'LaunchTemplateName');
    if (names.some((n) => !this.launchTemplates.some((t) => t.LaunchTemplateName === n)))
      throw new Ec2Error(
        'InvalidLaunchTemplateName.NotFoundException',
        'At least one of the launch templates specified in the request does not exist.',
      );
    const page = describe(params, {
      action: 'DescribeLaunchTemplates',
      items: names.length
        ? this.launchTemplates.filter((t) => names.includes(t.LaunchTemplateName))
        : this.launchTemplates,
      idOf: (t) => t.LaunchTemplateId,
      idParam: 'LaunchTemplateId',
      idPrefix: 'lt',
      malformedCode: 'InvalidLaunchTemplateId.Malformed',
      notFoundCode: 'InvalidLaunchTemplateId.NotFound',
      notFoundMessage: (ids) =>
        `The specified launch template, with template ID ${ids[0]}, does not exist.`,
      maxResults: { min: 1, max: 200 },
      filters: {
        'launch-template-name': (t) => [t.LaunchTemplateName],
        ...tagFilters((t: Ec2LaunchTemplate) => t.Tags),
      },
    });
    return {
      launchTemplates: page.items.map((t) => this.renderLaunchTemplate(t)),
      nextToken: page.nextToken,
    };
  }

  private createLaunchTemplate(params: Map<string, string>): XmlObject {
    const name = params.get('LaunchTemplateName') ?? '';
    if (!/^[a-zA-Z0-9()./_-]{3,128}$/.test(name))
      throw new Ec2Error(
        'InvalidLaunchTemplateName.MalformedException',
        `The launch template name is invalid: ${name}`,
      );
    if (this.launchTemplates.some((t) => t.LaunchTemplateName === name))
      throw new Ec2Error(
        'InvalidLaunchTemplateName.AlreadyExistsException',
        `Launch template name already in use.`,
      );
    const userData = params.get('LaunchTemplateData.UserData');
    // EC2 limits user data to 16 KB, decoded.
    if (userData !== undefined && Buffer.from(userData, 'base64').length > 16 * 1024)
      throw new Ec2Error('InvalidUserData.Malformed', 'User data is limited to 16384 bytes');
    const template: Ec2LaunchTemplate = {
      LaunchTemplateId: `lt-${randomBytes(9).toString('hex').slice(0, 17)}`,
      LaunchTemplateName: name,
      CreateTime: new Date().toISOString(),
      Tags: specifiedTags(params, 'launch-template'),
      Data: Object.fromEntries(
        [...params]
          .filter(([k]) => k.startsWith('LaunchTemplateData.'))
          .map(([k, v]) => [k.slice('LaunchTemplateData.'.length), v]),
      ),
    };
    this.launchTemplates.push(template);
    return { launchTemplate: this.renderLaunchTemplate(template) };
  }

  private deleteLaunchTemplate(params: Map<string, string>): XmlObject {
    const id = params.get('LaunchTemplateId');
    const name = params.get('LaunchTemplateName');
    const template = this.launchTemplates.find(
      (t) => t.LaunchTemplateId === id || t.LaunchTemplateName === name,
    );
    if (!template)
      throw new Ec2Error(
        id ? 'InvalidLaunchTemplateId.NotFound' : 'InvalidLaunchTemplateName.NotFoundException',
        id
          ? `The specified launch template, with template ID ${id}, does not exist.`
          : 'At least one of the launch templates specified in the request does not exist.',
      );
    this.launchTemplates = this.launchTemplates.filter((t) => t !== template);
    return { launchTemplate: this.renderLaunchTemplate(template) };
  }

  private renderLaunchTemplate(t: Ec2LaunchTemplate): XmlObject {
    return {
      launchTemplateId: t.LaunchTemplateId,
      launchTemplateName: t.LaunchTemplateName,
      createTime: t.CreateTime,
      createdBy: `arn:aws:iam::${this.accountId}:root`,
      defaultVersionNumber: 1,
      latestVersionNumber: 1,
      tagSet: tagSet(t.Tags),
    };
  }

  /**
   * A spot price for every catalogue type in every zone of the world's subnets: a tenth of a
   * cent per vCPU-hour plus a little per GiB, steady (the world holds no price history).
   */
  private describeSpotPriceHistory(params: Map<string, string>): XmlObject {
    const types = listParam(params, 'InstanceType');
    const zones = [...new Set(this.subnets.map((s) => s.AvailabilityZone))];
    const products = listParam(params, 'ProductDescription');
    const product = products[0] ?? 'Linux/UNIX';
    const history = this.instanceTypes
      .filter((t) => types.length === 0 || types.includes(t.InstanceType))
      .flatMap((t) =>
        zones.map((zone) => ({
          instanceType: t.InstanceType,
          productDescription: product,
          spotPrice: (t.VCpus * 0.01 + (t.MemoryMiB / 1024) * 0.001).toFixed(6),
          timestamp: new Date().toISOString(),
          availabilityZone: zone,
        })),
      );
    return { spotPriceHistorySet: history, nextToken: '' };
  }

  /**
   * An `instant` fleet of one instance, as Karpenter launches every NodeClaim
   * (karpenter-provider-aws pkg/providers/instance/types.go CreateFleetInputBuilder): the launch
   * template supplies user data, instance profile and security groups, each override an
   * (instance type, subnet, zone, image). On-Demand is served lowest price first, which is
   * Karpenter's `Priority` (the offering's price); overrides EC2 cannot serve become the
   * response's errors, and none served is an empty instance set, as EC2 answers.
   */
  private createFleet(params: Map<string, string>): XmlObject {
    const type = params.get('Type') ?? 'maintain';
    if (type !== 'instant')
      throw new Ec2Error(
        'InvalidParameterValue',
        `The emulator launches only instant fleets; Type ${type} is not served.`,
      );
    const capacity = Number(params.get('TargetCapacitySpecification.TotalTargetCapacity'));
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Ec2Error(
        'MissingParameter',
        'The request must contain the parameter TargetCapacitySpecification.TotalTargetCapacity',
      );
    const capacityType =
      params.get('TargetCapacitySpecification.DefaultTargetCapacityType') ?? 'on-demand';
    if (capacityType !== 'on-demand' && capacityType !== 'spot')
      throw new Ec2Error(
        'InvalidParameterValue',
        `The emulator launches on-demand and spot capacity, not ${capacityType}.`,
      );
    const configs = fleetLaunchTemplateConfigs(params);
    if (configs.length === 0)
      throw new Ec2Error(
        'MissingParameter',
        'The request must contain the parameter LaunchTemplateConfigs',
      );
    const candidates = configs.flatMap((config) => {
      const template = this.launchTemplates.find((t) =>
        config.templateId
          ? t.LaunchTemplateId === config.templateId
          : t.LaunchTemplateName === config.templateName,
      );
      // A missing template fails the whole request (Karpenter's IsLaunchTemplateNotFound).
      if (!template)
        throw config.templateId
          ? new Ec2Error(
              'InvalidLaunchTemplateId.NotFound',
              `The specified launch template, with template ID ${config.templateId}, does not exist.`,
            )
          : new Ec2Error(
              'InvalidLaunchTemplateName.NotFoundException',
              'At least one of the launch templates specified in the request does not exist.',
            );
      return config.overrides.map((override) => ({ template, config, override }));
    });
    const errors: XmlObject[] = [];
    const usable = candidates.filter(({ template, config, override }) => {
      const subnet = this.subnets.find((s) => s.SubnetId === override.SubnetId);
      const problem = !this.instanceTypes.some((t) => t.InstanceType === override.InstanceType)
        ? ['InvalidParameterValue', `The instance type '${override.InstanceType}' does not exist.`]
        : !subnet
          ? ['InvalidSubnetID.NotFound', notFound('subnet ID', [override.SubnetId ?? ''])]
          : override.AvailabilityZone && override.AvailabilityZone !== subnet.AvailabilityZone
            ? [
                'InvalidParameterValue',
                `Subnet ${subnet.SubnetId} is not in ${override.AvailabilityZone}.`,
              ]
            : undefined;
      if (problem)
        errors.push({
          launchTemplateAndOverrides: fleetOverridesXml(template, config, override),
          lifecycle: capacityType,
          errorCode: problem[0],
          errorMessage: problem[1],
        });
      return !problem;
    });
    const chosen = [...usable].sort(
      (a, b) => (a.override.Priority ?? Infinity) - (b.override.Priority ?? Infinity),
    )[0];
    const fleetId = `fleet-${randomUUID()}`;
    const instanceIds: string[] = [];
    if (chosen) {
      const { template, override } = chosen;
      const data = template.Data;
      // The template's instance tags, then the request's (EC2 applies both).
      const tags = {
        ...specifiedTags(new Map(Object.entries(data)), 'instance'),
        ...specifiedTags(params, 'instance'),
      };
      for (let n = 0; n < capacity; n++) {
        const launched = this.addInstance({
          InstanceType: override.InstanceType,
          ImageId: override.ImageId ?? data.ImageId,
          SubnetId: override.SubnetId,
          // EC2 reports `pending` for the first seconds; nothing here waits on that.
          State: 'running',
          IamInstanceProfile: data['IamInstanceProfile.Name'] ?? data['IamInstanceProfile.Arn'],
          SecurityGroupIds: [
            ...listParam(new Map(Object.entries(data)), 'SecurityGroupId'),
            ...listParam(new Map(Object.entries(data)), 'NetworkInterface.1.SecurityGroupId'),
          ],
          ...(data.UserData !== undefined ? { UserData: data.UserData } : {}),
          ...(capacityType === 'spot' ? { InstanceLifecycle: 'spot' as const } : {}),
          LaunchTemplateId: template.LaunchTemplateId,
          Tags: { ...tags, 'aws:ec2:fleet-id': fleetId },
        });
        instanceIds.push(launched.InstanceId);
      }
    }
    return {
      fleetId,
      errorSet: errors,
      fleetInstanceSet: chosen
        ? [
            {
              launchTemplateAndOverrides: fleetOverridesXml(
                chosen.template,
                chosen.config,
                chosen.override,
              ),
              lifecycle: capacityType,
              instanceIds,
              instanceType: chosen.override.InstanceType,
              platform: undefined,
            },
          ]
        : [],
    };
  }

  /** Tags on instances, the resources Karpenter tags after a launch (its tagging controller). */
  private createTags(params: Map<string, string>): XmlObject {
    const ids = listParam(params, 'ResourceId');
    if (ids.length === 0)
      throw new Ec2Error(
        'MissingParameter',
        'The request must contain the parameter resourceIdSet',
      );
    const tags: Ec2Tags = {};
    for (const [key, value] of params) {
      const n = /^Tag\.(\d+)\.Key$/.exec(key)?.[1];
      if (n !== undefined) tags[value] = params.get(`Tag.${n}.Value`) ?? '';
    }
    for (const key of Object.keys(tags))
      if (key.toLowerCase().startsWith('aws:'))
        throw new Ec2Error(
          'InvalidParameterValue',
          `Tag keys starting with 'aws:' are reserved for internal use`,
        );
    const instances = ids.map((id) => {
      if (!/^i-[0-9a-f]{8,17}$/.test(id))
        throw new Ec2Error('InvalidID', `The ID '${id}' is not valid`);
      const instance = this.instances.find((i) => i.InstanceId === id);
      if (!instance)
        throw new Ec2Error('InvalidInstanceID.NotFound', notFound('instance ID', [id]));
      return instance;
    });
    for (const instance of instances) Object.assign(instance.Tags, tags);
    return { return: true };
  }

  /**
   * Terminates at once; the answer reports `shutting-down`, as EC2's does, and the instance is
   * `terminated` to every later call (EC2 keeps it listed so for about an hour).
   */
  private terminateInstances(params: Map<string, string>): XmlObject {
    const ids = listParam(params, 'InstanceId');
    if (ids.length === 0)
      throw new Ec2Error('MissingParameter', 'The request must contain the parameter InstanceId');
    const malformed = ids.filter((id) => !/^i-[0-9a-f]{8,17}$/.test(id));
    if (malformed.length > 0)
      throw new Ec2Error('InvalidInstanceID.Malformed', `Invalid id: "${malformed[0]}"`);
    const missing = ids.filter((id) => !this.instances.some((i) => i.InstanceId === id));
    if (missing.length > 0)
      throw new Ec2Error('InvalidInstanceID.NotFound', notFound('instance ID', missing));
    return {
      instancesSet: ids.map((id) => {
        const instance = this.requireInstance(id);
        const previous = instance.State;
        instance.State = 'terminated';
        const current = previous === 'terminated' ? 'terminated' : 'shutting-down';
        return {
          instanceId: id,
          currentState: { code: INSTANCE_STATE_CODES[current], name: current },
          previousState: { code: INSTANCE_STATE_CODES[previous], name: previous },
        };
      }),
    };
  }

  /** Every running instance is `ok`: none is impaired or scheduled for an event. */
  private describeInstanceStatus(params: Map<string, string>): XmlObject {
    const page = describe(params, {
      action: 'DescribeInstanceStatus',
      items: this.instances.filter((i) => i.State === 'running'),
      ...INSTANCE_IDS,
      maxResults: { min: 5, max: 1000 },
      filters: {
        'instance-status.status': () => ['ok'],
        'system-status.status': () => ['ok'],
        // No instance has a scheduled event.
        'event.code': () => [],
        'instance-state-name': (i) => [i.State],
        'availability-zone': (i) => [i.AvailabilityZone],
      },
    });
    return {
      instanceStatusSet: page.items.map((i) => ({
        instanceId: i.InstanceId,
        availabilityZone: i.AvailabilityZone,
        instanceState: { code: INSTANCE_STATE_CODES[i.State], name: i.State },
        instanceStatus: { status: 'ok', details: [{ name: 'reachability', status: 'passed' }] },
        systemStatus: { status: 'ok', details: [{ name: 'reachability', status: 'passed' }] },
      })),
      nextToken: page.nextToken,
    };
  }

  private renderInstance(i: Ec2Instance): XmlObject {
    const profileArn = this.instanceProfileArn(i.IamInstanceProfile);
    const live = i.State !== 'terminated';
    const groups = (i.SecurityGroupIds ?? []).map((id) => ({
      groupId: id,
      groupName: this.securityGroups.find((g) => g.GroupId === id)?.GroupName,
    }));
    return {
      instanceId: i.InstanceId,
      imageId: i.ImageId,
      instanceState: { code: INSTANCE_STATE_CODES[i.State], name: i.State },
      // Terminated instances lose their private DNS name and addresses, as on EC2.
      privateDnsName: live ? i.PrivateDnsName : '',
      dnsName: '',
      reason: i.State === 'terminated' ? 'User initiated' : '',
      amiLaunchIndex: 0,
      productCodes: [],
      instanceType: i.InstanceType,
      launchTime: i.LaunchTime,
      placement: { availabilityZone: i.AvailabilityZone, groupName: '', tenancy: 'default' },
      monitoring: { state: 'disabled' },
      subnetId: live ? i.SubnetId : undefined,
      vpcId: live ? i.VpcId : undefined,
      privateIpAddress: live ? i.PrivateIpAddress : undefined,
      // The primary interface and its addresses, as EC2 lists them (a terminated instance has none).
      networkInterfaceSet: live
        ? [
            {
              networkInterfaceId: `eni-${i.InstanceId.slice(2)}`,
              subnetId: i.SubnetId,
              vpcId: i.VpcId,
              ownerId: this.accountId,
              status: 'in-use',
              privateIpAddress: i.PrivateIpAddress,
              privateDnsName: i.PrivateDnsName,
              sourceDestCheck: true,
              attachment: { deviceIndex: 0, status: 'attached', deleteOnTermination: true },
              privateIpAddressesSet: [
                i.PrivateIpAddress,
                ...(i.SecondaryPrivateIpAddresses ?? []),
              ].map((ip, n) => ({
                privateIpAddress: ip,
                privateDnsName: n === 0 ? i.PrivateDnsName : this.privateDnsName(ip),
                primary: n === 0,
              })),
              ipv6AddressesSet: [],
            },
          ]
        : [],
      sourceDestCheck: true,
      groupSet: groups,
      stateReason:
        i.State === 'terminated' || i.State === 'stopped'
          ? {
              code: 'Client.UserInitiatedShutdown',
              message: 'Client.UserInitiatedShutdown: User initiated shutdown',
            }
          : undefined,
      architecture: 'x86_64',
      rootDeviceType: 'ebs',
      rootDeviceName: '/dev/xvda',
      blockDeviceMapping: [],
      virtualizationType: 'hvm',
      clientToken: '',
      tagSet: tagSet({
        ...i.Tags,
        ...(i.LaunchTemplateId
          ? { 'aws:ec2launchtemplate:id': i.LaunchTemplateId, 'aws:ec2launchtemplate:version': '1' }
          : {}),
      }),
      instanceLifecycle: i.InstanceLifecycle,
      spotInstanceRequestId:
        i.InstanceLifecycle === 'spot' ? `sir-${i.InstanceId.slice(2, 10)}` : undefined,
      hypervisor: 'xen',
      iamInstanceProfile: profileArn ? { arn: profileArn, id: 'AIPAEMULATOR' } : undefined,
      ebsOptimized: true,
      enaSupport: true,
      metadataOptions: {
        state: 'applied',
        httpTokens: 'required',
        httpPutResponseHopLimit: 2,
        httpEndpoint: 'enabled',
      },
    };
  }

  // ---- helpers ---------------------------------------------------------------------------

  private requireInstance(instanceId: string): Ec2Instance {
    const found = this.instances.find((i) => i.InstanceId === instanceId);
    if (!found) throw new Error(`no instance ${instanceId} in the emulator`);
    return found;
  }

  private instanceProfileArn(profile: string | undefined): string | undefined {
    if (profile === undefined) return undefined;
    if (profile.startsWith('arn:')) return profile;
    return (
      this.instanceProfiles.find((p) => p.InstanceProfileName === profile)?.Arn ??
      `arn:aws:iam::${this.accountId}:instance-profile/${profile}`
    );
  }

  private arn(kind: string, id: string): string {
    return `arn:aws:ec2:${this.regionName}:${this.accountId}:${kind}/${id}`;
  }

  private allocateIp(subnet: Ec2WorldSubnet | undefined): string {
    this.ipCounter += 1;
    const base = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\//.exec(subnet?.CidrBlock ?? '10.0.0.0/16');
    const octets = base ? base.slice(1, 5).map(Number) : [10, 0, 0, 0];
    const n =
      (((octets[0]! << 24) >>> 0) +
        (octets[1]! << 16) +
        (octets[2]! << 8) +
        octets[3]! +
        10 +
        this.ipCounter) >>>
      0;
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  }

  private privateDnsName(ip: string): string {
    const host = `ip-${ip.replace(/\./g, '-')}`;
    return this.regionName === 'us-east-1'
      ? `${host}.ec2.internal`
      : `${host}.${this.regionName}.compute.internal`;
  }
}

// ---- query protocol helpers ----------------------------------------------------------------

/** An SQS error: its JSON `__type` code and its query-protocol code (x-amzn-query-error). */
export class SqsError extends Error {
  constructor(
    readonly code: string,
    readonly queryCode: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const queueDoesNotExist = (): SqsError =>
  new SqsError(
    'QueueDoesNotExist',
    'AWS.SimpleQueueService.NonExistentQueue',
    'The specified queue does not exist.',
  );

/** How Describe calls on instances take and check instance ids. */
const INSTANCE_IDS = {
  idOf: (i: Ec2Instance) => i.InstanceId,
  idParam: 'InstanceId',
  idPrefix: 'i',
  malformedCode: 'InvalidInstanceID.Malformed',
  notFoundCode: 'InvalidInstanceID.NotFound',
  notFoundMessage: (ids: string[]) => notFound('instance ID', ids),
};

interface FleetOverride {
  InstanceType?: string;
  SubnetId?: string;
  AvailabilityZone?: string;
  ImageId?: string;
  Priority?: number;
}

interface FleetLaunchTemplateConfig {
  templateId?: string;
  templateName?: string;
  version?: string;
  overrides: FleetOverride[];
}

/** CreateFleet's LaunchTemplateConfigs.N, each with its Overrides.M, as the query sends them. */
function fleetLaunchTemplateConfigs(params: Map<string, string>): FleetLaunchTemplateConfig[] {
  const configs = new Map<number, FleetLaunchTemplateConfig>();
  const config = (n: number) => {
    let found = configs.get(n);
    if (!found) configs.set(n, (found = { overrides: [] }));
    return found;
  };
  const overrides = new Map<string, FleetOverride>();
  for (const [key, value] of params) {
    const spec = /^LaunchTemplateConfigs\.(\d+)\.LaunchTemplateSpecification\.(\w+)$/.exec(key);
    if (spec) {
      const c = config(Number(spec[1]));
      if (spec[2] === 'LaunchTemplateId') c.templateId = value;
      if (spec[2] === 'LaunchTemplateName') c.templateName = value;
      if (spec[2] === 'Version') c.version = value;
      continue;
    }
    const o = /^LaunchTemplateConfigs\.(\d+)\.Overrides\.(\d+)\.(\w+)$/.exec(key);
    if (!o) continue;
    const id = `${o[1]}.${o[2]}`;
    let override = overrides.get(id);
    if (!override) {
      overrides.set(id, (override = {}));
      config(Number(o[1])).overrides[Number(o[2]) - 1] = override;
    }
    const field = o[3] as keyof FleetOverride;
    if (field === 'Priority') override.Priority = Number(value);
    else if (
      field === 'InstanceType' ||
      field === 'SubnetId' ||
      field === 'AvailabilityZone' ||
      field === 'ImageId'
    )
      override[field] = value;
  }
  return [...configs.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, c]) => ({ ...c, overrides: c.overrides.filter(Boolean) }));
}

function fleetOverridesXml(
  template: Ec2LaunchTemplate,
  config: FleetLaunchTemplateConfig,
  override: FleetOverride,
): XmlObject {
  return {
    launchTemplateSpecification: {
      launchTemplateId: template.LaunchTemplateId,
      version: config.version ?? '$Default',
    },
    overrides: {
      instanceType: override.InstanceType,
      subnetId: override.SubnetId,
      availabilityZone: override.AvailabilityZone,
      imageId: override.ImageId,
      priority: override.Priority,
    },
  };
}

function invalidAction(action: string): Ec2Error {
  return new Ec2Error('InvalidAction', `The action ${action} is not valid for this web service.`);
}

function notFound(what: string, ids: string[]): string {
  return ids.length === 1
    ? `The ${what} '${ids[0]}' does not exist`
    : `The ${what}s '${ids.join(', ')}' do not exist`;
}

function tagSet(tags: Ec2Tags | undefined): XmlValue {
  const entries = Object.entries(tags ?? {});
  return entries.length === 0 ? undefined : entries.map(([key, value]) => ({ key, value }));
}

/** The tags a TagSpecification.N asks for the given resource type. */
function specifiedTags(params: Map<string, string>, resourceType: string): Ec2Tags {
  const tags: Ec2Tags = {};
  for (const [key, value] of params) {
    const spec = /^TagSpecification\.(\d+)\.ResourceType$/.exec(key)?.[1];
    if (spec === undefined || value !== resourceType) continue;
    for (const [k, v] of params) {
      const tag = /^TagSpecification\.(\d+)\.Tag\.(\d+)\.Key$/.exec(k);
      if (tag?.[1] === spec)
        tags[v] = params.get(`TagSpecification.${spec}.Tag.${tag[2]}.Value`) ?? '';
    }
  }
  return tags;
}

function tagFilters<T>(tagsOf: (item: T) => Ec2Tags | undefined): FilterTable<T> {
  return {
    'tag-key': (item) => Object.keys(tagsOf(item) ?? {}),
    'tag-value': (item) => Object.values(tagsOf(item) ?? {}),
  };
}

/** `Name.1`, `Name.2`, … in numeric order. */
export function listParam(params: Map<string, string>, name: string): string[] {
  const found: [number, string][] = [];
  const re = new RegExp(`^${name.replace(/\./g, '\\.')}\\.(\\d+)$`);
  for (const [key, value] of params) {
    const m = re.exec(key);
    if (m) found.push([Number(m[1]), value]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, v]) => v);
}

interface QueryFilter {
  name: string;
  values: string[];
}

function filterParams(params: Map<string, string>): QueryFilter[] {
  const indexes = new Set<number>();
  for (const key of params.keys()) {
    const m = /^Filter\.(\d+)\.Name$/.exec(key);
    if (m) indexes.add(Number(m[1]));
  }
  return [...indexes]
    .sort((a, b) => a - b)
    .map((n) => {
      const values = listParam(params, `Filter.${n}.Value`);
      return { name: params.get(`Filter.${n}.Name`)!, values };
    });
}

const globCache = new Map<string, RegExp>();

// EC2 filter values accept * and ? wildcards, with backslash escaping them.
function globMatch(pattern: string, value: string): boolean {
  let re = globCache.get(pattern);
  if (!re) {
    let source = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
      else if (c === '*') source += '.*';
      else if (c === '?') source += '.';
      else source += escapeRegExp(c);
    }
    re = new RegExp(`^${source}$`, 's');
    globCache.set(pattern, re);
  }
  return re.test(value);
}

function escapeRegExp(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function describe<T>(
  params: Map<string, string>,
  spec: DescribeSpec<T>,
): { items: T[]; nextToken?: string } {
  const ids = spec.idParam === undefined ? [] : listParam(params, spec.idParam);
  const maxResultsRaw = params.get('MaxResults');
  const nextToken = params.get('NextToken');

  const idPattern = new RegExp(`^${spec.idPrefix}-([0-9a-z]{8}|[0-9a-z]{17})$`);
  for (const id of ids) {
    if (!idPattern.test(id)) {
      throw new Ec2Error(
        spec.malformedCode,
        `Invalid id: "${id}" (expecting "${spec.idPrefix}-...")`,
      );
    }
  }

  let maxResults: number | undefined;
  if (maxResultsRaw !== undefined) {
    if (spec.maxResultsExcludesIds && ids.length > 0) {
      throw new Ec2Error(
        'InvalidParameterCombination',
        `The parameter ${spec.maxResultsExcludesIds} cannot be used with the parameter maxResults`,
      );
    }
    maxResults = Number(maxResultsRaw);
    if (
      !Number.isInteger(maxResults) ||
      maxResults < spec.maxResults.min ||
      maxResults > spec.maxResults.max
    ) {
      throw new Ec2Error(
        'InvalidParameterValue',
        `Value ( ${maxResultsRaw} ) for parameter maxResults is invalid. Expecting a value ${
          maxResults < spec.maxResults.min
            ? `greater than ${spec.maxResults.min - 1}`
            : `less than ${spec.maxResults.max + 1}`
        }.`,
      );
    }
  }

  const filters = filterParams(params);
  for (const filter of filters) {
    if (!filter.name.startsWith('tag:') && !(filter.name in spec.filters)) {
      throw new Ec2Error('InvalidParameterValue', `The filter '${filter.name}' is invalid`);
    }
    if (filter.values.length === 0) {
      throw new Ec2Error(
        'InvalidParameterValue',
        `The filter '${filter.name}' requires at least one value`,
      );
    }
  }

  let items = spec.items;
  if (ids.length > 0) {
    const known = new Set(items.map(spec.idOf));
    const missing = [...new Set(ids)].filter((id) => !known.has(id));
    if (missing.length > 0) throw new Ec2Error(spec.notFoundCode, spec.notFoundMessage(missing));
    items = items.filter((item) => ids.includes(spec.idOf(item)));
  }
  items = items.filter((item) =>
    filters.every((filter) => {
      let actual: (string | undefined)[];
      if (filter.name.startsWith('tag:')) {
        const key = filter.name.slice(4);
        const tags = (item as { Tags?: Ec2Tags }).Tags ?? {};
        actual = Object.prototype.hasOwnProperty.call(tags, key) ? [tags[key]] : [];
      } else {
        actual = spec.filters[filter.name]!(item);
      }
      return actual.some((v) => v !== undefined && filter.values.some((p) => globMatch(p, v)));
    }),
  );

  const fingerprint = createHash('sha256')
    .update(
      JSON.stringify(
        [...params.entries()].filter(([k]) => k !== 'NextToken' && k !== 'MaxResults').sort(),
      ),
    )
    .digest('hex')
    .slice(0, 16);
  let offset = 0;
  if (nextToken !== undefined) {
    const decoded = decodeToken(nextToken);
    if (!decoded || decoded.action !== spec.action || decoded.fingerprint !== fingerprint) {
      throw new Ec2Error('InvalidPaginationToken', `The token '${nextToken}' is invalid.`);
    }
    offset = decoded.offset;
  }
  if (maxResults === undefined) return { items: items.slice(offset) };
  const pageItems = items.slice(offset, offset + maxResults);
  const end = offset + pageItems.length;
  return {
    items: pageItems,
    nextToken:
      end < items.length
        ? encodeToken({ action: spec.action, offset: end, fingerprint })
        : undefined,
  };
}

interface PageToken {
  action: string;
  offset: number;
  fingerprint: string;
}

function encodeToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeToken(raw: string): PageToken | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<PageToken>;
    if (
      typeof parsed.action !== 'string' ||
      typeof parsed.offset !== 'number' ||
      typeof parsed.fingerprint !== 'string'
    ) {
      return undefined;
    }
    return parsed as PageToken;
  } catch {
    return undefined;
  }
}
