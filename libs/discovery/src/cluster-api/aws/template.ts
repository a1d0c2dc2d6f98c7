import { defineKind } from '@fleet/contracts';
import { z } from 'zod';
import { describeIssues } from '../../zod-issues.js';
import type { InfrastructureTemplateParser } from '../types.js';

export const AWS_MACHINE_TEMPLATE = defineKind(
  'infrastructure.cluster.x-k8s.io',
  'v1beta2',
  'AWSMachineTemplate',
  'awsmachinetemplates',
  true,
);

const awsMachineTemplate = z.object({
  metadata: z.object({ name: z.string() }),
  spec: z.object({
    template: z.object({
      spec: z
        .object({
          instanceType: z.string().min(1),
          rootVolume: z.object({ size: z.number().int().positive() }).loose().optional(),
        })
        .loose(),
    }),
  }),
});

/** CAPA: AWSCluster → AWSMachineTemplate. */
export const AWS_TEMPLATE_PARSER: InfrastructureTemplateParser = {
  clusterKind: 'AWSCluster',
  name: 'aws',
  templateKind: AWS_MACHINE_TEMPLATE,
  parse(object) {
    const parsed = awsMachineTemplate.safeParse(object);
    if (!parsed.success) return { ok: false, message: describeIssues(parsed.error, '') };
    const spec = parsed.data.spec.template.spec;
    return {
      ok: true,
      value: {
        name: parsed.data.metadata.name,
        instanceType: spec.instanceType,
        ...(spec.rootVolume ? { rootVolumeGiB: spec.rootVolume.size } : {}),
        spec,
      },
    };
  },
};
