import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** deploy/, from this module's location. */
export const DEPLOY_DIR = fileURLToPath(new URL('../../deploy/', import.meta.url));

export interface ManifestDocument {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  [key: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    /** The downward API: metadata.namespace, spec.serviceAccountName, ... */
    fieldRef?: { fieldPath: string };
  };
}

export interface ManifestContainer {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: { secretRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    readOnlyRootFilesystem?: boolean;
  };
}

export interface Workload {
  /** Relative to deploy/. */
  file: string;
  kind: string;
  name: string;
  namespace?: string;
  serviceAccountName?: string;
  podSecurityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: ManifestContainer[];
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? yamlFiles(join(dir, e.name))
      : /\.ya?ml$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );

/** Every YAML document under deploy/, with the file it came from. */
export function deployDocuments(): { file: string; docs: ManifestDocument[] }[] {
  return yamlFiles(DEPLOY_DIR).map((file) => ({
    file: relative(DEPLOY_DIR, file),
    docs: parseAllDocuments(readFileSync(file, 'utf8'))
      .filter((d) => d.contents !== null)
      .map((d) => {
        if (d.errors.length) throw new Error(`${file}: ${d.errors[0]!.message}`);
        return d.toJS() as ManifestDocument;
      }),
  }));
}

interface PodTemplate {
  spec?: {
    template?: {
      spec?: {
        securityContext?: Workload['podSecurityContext'];
        serviceAccountName?: string;
        containers?: ManifestContainer[];
      };
    };
  };
}

/** The Deployments and Jobs of deploy/, with their pod templates' containers. */
export function deployWorkloads(): Workload[] {
  return deployDocuments().flatMap(({ file, docs }) =>
    docs
      .filter((d) => d.kind === 'Deployment' || d.kind === 'Job')
      .map((d) => {
        const pod = (d as PodTemplate).spec?.template?.spec;
        return {
          file,
          kind: d.kind!,
          name: d.metadata?.name ?? '',
          ...(d.metadata?.namespace ? { namespace: d.metadata.namespace } : {}),
          ...(pod?.serviceAccountName ? { serviceAccountName: pod.serviceAccountName } : {}),
          ...(pod?.securityContext ? { podSecurityContext: pod.securityContext } : {}),
          containers: pod?.containers ?? [],
        };
      }),
  );
}

/** `quay.io/karpenter-fleet/api:0.1.0` → `api`: the Containerfile target that builds it. */
export function imageTarget(image: string): string {
  const match = /^quay\.io\/karpenter-fleet\/([a-z-]+):[\w.-]+$/.exec(image);
  if (!match) throw new Error(`${image} is not one of the project's images`);
  return match[1]!;
}
