import { fileURLToPath } from 'node:url';

/**
 * The upstream CRDs this project ships (libs/crd-schema/upstream, provenance in its sources/),
 * found from this module's own location so that every process finds them whatever its working
 * directory: from the sources, from dist/ (the build copies the directory beside the compiled
 * module) and inside the container image, which carries dist/.
 */
export const UPSTREAM_CRD_DIRECTORY = fileURLToPath(new URL('../upstream/', import.meta.url));

/** The Karpenter CRDs (NodePool, NodeClaim and every provider's NodeClass). */
export const KARPENTER_CRD_DIRECTORY = `${UPSTREAM_CRD_DIRECTORY}karpenter/`;
