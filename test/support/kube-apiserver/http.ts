import type { IncomingMessage, ServerResponse } from 'node:http';

import { parse as parseYaml } from 'yaml';

import type {
  DeleteOptions,
  KubeApiServerEmulator,
  PatchType,
  RequestLogEntry,
  WriteOptions,
} from './emulator.js';
import type { Attributes } from './authorization.js';
import {
  ApiError,
  badRequest,
  cause,
  invalid,
  internalError,
  methodNotSupported,
  unauthorized,
} from './errors.js';
import { groupVersionDocument, openApiRoot } from './openapi.js';
import { decodeProtobuf } from './protobuf.js';
import { ResourceDef, VERBS } from './resources.js';
import { toTable, wantsTable } from './table.js';
import { compareVersions, isObject, JsonObject, KubeObject } from './util.js';

const MAX_BODY = 3 * 1024 * 1024;

function sendJson(res: ServerResponse, code: number, body: unknown, warnings: string[] = []): void {
  if (res.headersSent) return;
  const data = JSON.stringify(body);
  const headers: Record<string, string | string[]> = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(data)),
    'Cache-Control': 'no-cache, private',
  };
  // A deprecated version's warning was set on the response before the request was handled.
  const prior = res.getHeader('Warning');
  const all = [
    ...(prior === undefined ? [] : [prior].flat().map(String)),
    ...warnings.map((w) => `299 - ${JSON.stringify(w)}`),
  ];
  if (all.length) headers.Warning = all;
  res.writeHead(code, headers);
  res.end(data);
}

/**
 * A path no API group version is served at: kube-apiserver's mux answers it in plain text, not
 * with a Status (a known group version with an unknown resource gets a Status).
 */
class PageNotFound extends Error {}

function sendError(res: ServerResponse, e: unknown): void {
  if (e instanceof PageNotFound) {
    res.writeHead(404, {
      'content-type': 'text/plain; charset=utf-8',
      'x-content-type-options': 'nosniff',
    });
    res.end('404 page not found\n');
    return;
  }
  const err = e instanceof ApiError ? e : internalError(e instanceof Error ? e.message : String(e));
  sendJson(res, err.code, err.toStatus());
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    const b = c as Buffer;
    size += b.length;
    if (size > MAX_BODY)
      throw new ApiError(
        413,
        'RequestEntityTooLarge',
        'Request entity too large: limit is 3145728',
      );
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

function parseBody(body: Buffer, contentType: string): unknown {
  if (/protobuf/.test(contentType)) return decodeProtobuf(body);
  const text = body.toString('utf8');
  if (!text.trim()) return undefined;
  try {
    if (/yaml/.test(contentType)) return parseYaml(text) as unknown;
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw badRequest(`error decoding request body: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function gv(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

function resourceList(
  em: KubeApiServerEmulator,
  group: string,
  version: string,
): JsonObject | undefined {
  const defs = em.allDefs().filter((d) => d.group === group && d.version === version);
  if (!defs.length) return undefined;
  const resources: JsonObject[] = [];
  for (const d of defs.sort((a, b) => a.plural.localeCompare(b.plural))) {
    const r: JsonObject = {
      name: d.plural,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: d.verbs ?? VERBS,
    };
    if (d.shortNames?.length) r.shortNames = d.shortNames;
    if (d.categories?.length) r.categories = d.categories;
    resources.push(r);
    const subs = [...(d.status ? ['status'] : []), ...d.subresources];
    for (const s of subs) {
      const sr: JsonObject = {
        name: `${d.plural}/${s}`,
        singularName: '',
        namespaced: d.namespaced,
        kind: d.kind,
        verbs: ['get', 'patch', 'update'],
      };
      if (s === 'scale') Object.assign(sr, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
      if (s === 'finalize') sr.verbs = ['update'];
      resources.push(sr);
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

function apiGroup(em: KubeApiServerEmulator, group: string): JsonObject | undefined {
  const versions = [
    ...new Set(
      em
        .allDefs()
        .filter((d) => d.group === group)
        .map((d) => d.version),
    ),
  ].sort(compareVersions);
  if (!versions.length) return undefined;
  const list = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: list, preferredVersion: list[0] };
}

function boolParam(v: string | null): boolean {
  return v === 'true' || v === '1';
}

/**
 * `dryRun` must be `All` (the only value kube-apiserver knows); anything else fails validation of
 * the request's options object, as ValidateCreateOptions and friends do.
 */
function dryRunParam(values: unknown[], optionsKind: string): boolean {
  const bad = values.find((v) => v !== 'All');
  if (bad !== undefined)
    throw invalid(optionsKind, 'meta.k8s.io', '', [cause.notSupported('dryRun', bad, ['All'])]);
  return values.length > 0;
}

const OPTIONS_KIND: Record<string, string> = {
  POST: 'CreateOptions',
  PUT: 'UpdateOptions',
  PATCH: 'PatchOptions',
  DELETE: 'DeleteOptions',
};

function writeOptions(q: URLSearchParams, req: IncomingMessage): WriteOptions {
  const optionsKind = OPTIONS_KIND[req.method ?? ''] ?? 'CreateOptions';
  const o: WriteOptions = {};
  const fm = q.get('fieldManager');
  if (fm) o.fieldManager = fm;
  o.dryRun = dryRunParam(q.getAll('dryRun'), optionsKind);
  if (!o.dryRun) delete o.dryRun;
  const fv = q.get('fieldValidation');
  if (fv) {
    if (fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore')
      throw badRequest(
        `fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Strict", "Warn"`,
      );
    o.fieldValidation = fv;
  }
  if (q.has('force')) o.force = boolParam(q.get('force'));
  if (req.headers['user-agent']) o.userAgent = req.headers['user-agent'];
  return o;
}

export async function handleHttp(
  em: KubeApiServerEmulator,
  req: IncomingMessage,
  res: ServerResponse,
  entry: RequestLogEntry,
): Promise<void> {
  try {
    const u = new URL(req.url ?? '/', 'http://emulator');
    entry.path = u.pathname;
    entry.query = u.search;
    const path = u.pathname.replace(/\/+$/, '') || '/';
    const q = u.searchParams;
    const method = req.method ?? 'GET';
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      entry.verb = 'get';
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if (path === '/version') {
      entry.verb = 'get';
      const m = /^v(\d+)\.(\d+)/.exec(em.gitVersion);
      sendJson(res, 200, {
        major: m?.[1] ?? '1',
        minor: m?.[2] ?? '34',
        gitVersion: em.gitVersion,
        gitCommit: '0000000000000000000000000000000000000000',
        gitTreeState: 'clean',
        buildDate: '2024-12-11T00:00:00Z',
        goVersion: 'go1.23.4',
        compiler: 'gc',
        platform: 'linux/amd64',
      });
      return;
    }
    const authenticated = em.authenticate(req.headers.authorization);
    if (!authenticated) throw unauthorized();
    const user = em.impersonate(authenticated, req.headers);
    const nonResource = (): void =>
      em.authorize({ user, verb: method.toLowerCase(), resourceRequest: false, path: u.pathname });

    if (path === '/api') {
      nonResource();
      entry.verb = 'get';
      sendJson(res, 200, {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: u.host }],
      });
      return;
    }
    if (path === '/apis') {
      nonResource();
      entry.verb = 'get';
      const groups = [...new Set(em.allDefs().map((d) => d.group))].filter((g) => g !== '').sort();
      sendJson(res, 200, {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: groups.map((g) => apiGroup(em, g)),
      });
      return;
    }
    if (path === '/openapi/v3' || path.startsWith('/openapi/v3/')) {
      nonResource();
      entry.verb = 'get';
      if (path === '/openapi/v3') {
        sendJson(res, 200, openApiRoot(em.allDefs(), em.gitVersion));
        return;
      }
      const m = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
      const doc = m
        ? groupVersionDocument(em.allDefs(), m[2] ?? '', m[1] ?? m[3] ?? '', em.gitVersion)
        : undefined;
      if (!doc)
        throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      sendJson(res, 200, doc);
      return;
    }
    const segs = path.split('/').filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (segs[0] === 'api') {
      group = '';
      version = segs[1];
      rest = segs.slice(2);
    } else if (segs[0] === 'apis' && segs[1]) {
      group = segs[1];
      if (segs.length === 2) {
        nonResource();
        const g = apiGroup(em, group);
        if (!g) throw new PageNotFound();
        entry.verb = 'get';
        sendJson(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...g });
        return;
      }
      version = segs[2];
      rest = segs.slice(3);
    } else throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (!version)
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const list = resourceList(em, group, version);
    if (!list) throw new PageNotFound();
    if (rest.length === 0) {
      nonResource();
      entry.verb = 'get';
      sendJson(res, 200, list);
      return;
    }
    let watch = boolParam(q.get('watch'));
    if (rest[0] === 'watch') {
      watch = true;
      rest = rest.slice(1);
    }
    let ns: string | undefined;
    const nsSub =
      group === '' &&
      rest[0] === 'namespaces' &&
      rest.length === 3 &&
      (rest[2] === 'status' || rest[2] === 'finalize');
    if (rest[0] === 'namespaces' && rest.length >= 3 && !nsSub) {
      ns = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, sub, ...extra] = rest;
    const def = plural ? em.defFor(group, version, plural) : undefined;
    // An unknown resource of a served group version is no route either (plain text).
    if (!def) throw new PageNotFound();
    if (extra.length)
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (def.deprecationWarning)
      res.setHeader('Warning', [`299 - ${JSON.stringify(def.deprecationWarning)}`]);
    if (sub && sub !== 'status' && !def.subresources.includes(sub))
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (sub === 'status' && !def.status)
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (def.namespaced && name && !ns)
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (!def.namespaced && ns)
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');

    const verb =
      method === 'GET'
        ? watch
          ? 'watch'
          : name
            ? 'get'
            : 'list'
        : method === 'POST'
          ? 'create'
          : method === 'PUT'
            ? 'update'
            : method === 'PATCH'
              ? 'patch'
              : method === 'DELETE'
                ? name
                  ? 'delete'
                  : 'deletecollection'
                : method.toLowerCase();
    // As kube-apiserver's request-info resolver: a list or watch narrowed to one name by
    // `metadata.name=` is authorized as a request for that name (resourceNames rules apply).
    let authzName = name;
    if (!authzName && (verb === 'list' || verb === 'watch')) {
      const m = /(?:^|,)metadata\.name==?([^,]*)/.exec(q.get('fieldSelector') ?? '');
      if (m) authzName = m[1];
    }
    const attributes: Attributes = {
      user,
      verb,
      resourceRequest: true,
      apiGroup: group,
      apiVersion: version,
      resource: def.plural,
      ...(sub ? { subresource: sub } : {}),
      ...(authzName ? { name: authzName } : {}),
      ...(ns ? { namespace: ns } : {}),
    };
    em.authorize(attributes);
    if (def.verbs && !sub && !def.verbs.includes(verb))
      throw new ApiError(
        405,
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    if (def.review) {
      if (method !== 'POST' || name)
        throw new ApiError(
          405,
          'MethodNotAllowed',
          'the server does not allow this method on the requested resource',
        );
      entry.verb = 'create';
      const body = parseBody(
        await readBody(req),
        req.headers['content-type'] ?? 'application/json',
      );
      sendJson(res, 201, em.accessReview(def, ns, body as KubeObject, user, writeOptions(q, req)));
      return;
    }

    switch (method) {
      case 'GET': {
        const table = wantsTable(req.headers.accept);
        if (name && !watch) {
          entry.verb = 'get';
          const o = em.getObject(def, ns, name);
          sendJson(
            res,
            200,
            table
              ? toTable(def, [o], { resourceVersion: em.resourceVersion }, q.get('includeObject'))
              : o,
          );
          return;
        }
        if (watch) {
          entry.verb = 'watch';
          serveWatch(em, def, ns, name, q, req, res, table);
          return;
        }
        entry.verb = 'list';
        const limit = q.get('limit');
        const list = em.listObjects(def, ns, {
          ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
          ...(q.get('fieldSelector') ? { fieldSelector: q.get('fieldSelector')! } : {}),
          ...(limit ? { limit: Number(limit) } : {}),
          ...(q.get('continue') ? { continue: q.get('continue')! } : {}),
        });
        sendJson(
          res,
          200,
          table
            ? toTable(
                def,
                list.items as KubeObject[],
                list.metadata as JsonObject,
                q.get('includeObject'),
              )
            : list,
        );
        return;
      }
      case 'POST': {
        if (name && sub === 'token' && def.plural === 'serviceaccounts' && ns) {
          entry.verb = 'create';
          const body = parseBody(
            await readBody(req),
            req.headers['content-type'] ?? 'application/json',
          );
          sendJson(
            res,
            201,
            em.requestServiceAccountToken(ns, name, body as KubeObject, writeOptions(q, req)),
          );
          return;
        }
        if (name && sub === 'eviction' && def.plural === 'pods' && ns) {
          entry.verb = 'create';
          const body = parseBody(
            await readBody(req),
            req.headers['content-type'] ?? 'application/json',
          );
          em.evictPod(ns, name, body as KubeObject);
          sendJson(res, 201, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            code: 201,
          });
          return;
        }
        if (name) throw methodNotSupported(def.plural, def.group, 'create');
        entry.verb = 'create';
        const body = parseBody(
          await readBody(req),
          req.headers['content-type'] ?? 'application/json',
        );
        const r = em.createObject(def, ns, body as KubeObject, { ...writeOptions(q, req), user });
        sendJson(res, 201, r.object, r.warnings);
        return;
      }
      case 'PUT': {
        if (!name) throw methodNotSupported(def.plural, def.group, 'update');
        entry.verb = 'update';
        const body = parseBody(
          await readBody(req),
          req.headers['content-type'] ?? 'application/json',
        );
        const subres = sub === 'status' || sub === 'approval' ? sub : undefined;
        const r = em.updateObject(
          def,
          ns,
          name,
          body as KubeObject,
          { ...writeOptions(q, req), user },
          subres,
        );
        sendJson(res, 200, r.object, r.warnings);
        return;
      }
      case 'PATCH': {
        if (!name) throw methodNotSupported(def.plural, def.group, 'patch');
        entry.verb = 'patch';
        const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
        const types: Record<string, PatchType> = {
          'application/merge-patch+json': 'merge',
          'application/json-patch+json': 'json',
          'application/strategic-merge-patch+json': 'strategic',
          'application/apply-patch+yaml': 'apply',
          'application/apply-patch+cbor': 'apply',
        };
        const type = types[ct];
        if (!type)
          throw new ApiError(
            415,
            'UnsupportedMediaType',
            `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
          );
        const body = parseBody(await readBody(req), type === 'apply' ? 'yaml' : 'json');
        // A patch that creates (server-side apply of a new object) also needs `create`.
        if (type === 'apply' && !em.exists(def, ns, name))
          em.authorize({ ...attributes, verb: 'create' });
        const subres = sub === 'status' ? 'status' : undefined;
        if (sub && sub !== 'status') throw methodNotSupported(def.plural, def.group, 'patch');
        const r = em.patchObject(
          def,
          ns,
          name,
          type,
          body,
          { ...writeOptions(q, req), user },
          subres,
        );
        sendJson(res, r.created ? 201 : 200, r.object, r.warnings);
        return;
      }
      case 'DELETE': {
        if (sub) throw methodNotSupported(def.plural, def.group, 'delete');
        const raw = parseBody(await readBody(req), 'json');
        const opts: DeleteOptions = { user };
        const bodyOpts = isObject(raw) ? raw : {};
        const pp = q.get('propagationPolicy') ?? (bodyOpts.propagationPolicy as string | undefined);
        if (pp) {
          if (pp !== 'Foreground' && pp !== 'Background' && pp !== 'Orphan')
            throw badRequest(
              `propagationPolicy: Unsupported value: "${pp}": supported values: "Foreground", "Background", "Orphan"`,
            );
          opts.propagationPolicy = pp;
        }
        if (
          dryRunParam(
            [
              ...q.getAll('dryRun'),
              ...(Array.isArray(bodyOpts.dryRun) ? (bodyOpts.dryRun as unknown[]) : []),
            ],
            'DeleteOptions',
          )
        )
          opts.dryRun = true;
        if (isObject(bodyOpts.preconditions)) opts.preconditions = bodyOpts.preconditions;
        if (!name) {
          entry.verb = 'deletecollection';
          const list = em.listObjects(def, ns, {
            ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
            ...(q.get('fieldSelector') ? { fieldSelector: q.get('fieldSelector')! } : {}),
          });
          const deleted: KubeObject[] = [];
          for (const item of list.items as KubeObject[]) {
            deleted.push(
              em.deleteObject(def, item.metadata?.namespace, item.metadata?.name ?? '', opts),
            );
          }
          sendJson(res, 200, {
            ...list,
            items: deleted.map((d) =>
              def.custom ? d : { ...d, apiVersion: undefined, kind: undefined },
            ),
          });
          return;
        }
        entry.verb = 'delete';
        const obj = em.deleteObject(def, ns, name, opts);
        const stillThere =
          !!obj.metadata?.deletionTimestamp && !!em.get(gv(def), def.kind, name, ns);
        if (def.returnDeletedObject || stillThere) sendJson(res, 200, obj);
        else {
          const details: JsonObject = { name, kind: def.plural, uid: obj.metadata?.uid };
          if (def.group) details.group = def.group;
          sendJson(res, 200, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            details,
          });
        }
        return;
      }
      default:
        throw new ApiError(
          405,
          'MethodNotAllowed',
          `the server does not allow this method on the requested resource`,
        );
    }
  } catch (e) {
    sendError(res, e);
  }
}

function serveWatch(
  em: KubeApiServerEmulator,
  def: ResourceDef,
  ns: string | undefined,
  name: string | undefined,
  q: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  table = false,
): void {
  let fieldSelector = q.get('fieldSelector') ?? undefined;
  if (name) fieldSelector = [fieldSelector, `metadata.name=${name}`].filter(Boolean).join(',');
  const timeout = q.get('timeoutSeconds');
  const rv = q.get('resourceVersion');
  const sie = q.get('sendInitialEvents');
  let open = true;
  let sentHeaders = 0;
  const write = (type: string, object: unknown): void => {
    if (!open) return;
    if (!res.headersSent) startStream();
    // Table watches (kubectl get -w) get each object as a one-row Table; headers come first only.
    const out =
      table && (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED')
        ? toTable(
            def,
            [object as KubeObject],
            { resourceVersion: (object as KubeObject).metadata?.resourceVersion ?? '' },
            q.get('includeObject'),
            sentHeaders++ > 0,
          )
        : object;
    res.write(`${JSON.stringify({ type, object: out })}\n`);
  };
  const startStream = (): void => {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
  };
  const end = (): void => {
    if (!open) return;
    open = false;
    if (!res.headersSent) startStream();
    res.end();
  };
  // Selector errors are plain HTTP errors, before the stream starts.
  const stop = em.startWatch(
    def,
    {
      ...(def.namespaced && ns ? { namespace: ns } : {}),
      ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
      ...(rv !== null ? { resourceVersion: rv } : {}),
      allowWatchBookmarks: boolParam(q.get('allowWatchBookmarks')),
      ...(sie !== null ? { sendInitialEvents: boolParam(sie) } : {}),
      timeoutSeconds: timeout ? Number(timeout) : 1800,
    },
    write,
    end,
  );
  if (open && !res.headersSent) startStream();
  req.on('close', () => {
    open = false;
    stop();
  });
}
