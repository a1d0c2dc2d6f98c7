import { Args, ID, Info, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { selects } from '../common/selection.js';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { RequireRole } from '../auth/roles.decorator.js';
import { uidOf } from '../common/global-id.js';
import { JSONScalar } from '../common/json.scalar.js';
import {
  ClusterFilter,
  ClusterOrder,
  NodeClassOverridesInput,
  RegisterClusterInput,
  SetKarpenterInput,
  UpsertNodePoolInput,
} from './dto/cluster.inputs.js';
import { ClusterQueries } from './cluster-queries.service.js';
import { ClusterRegistration } from './cluster-registration.service.js';
import { DesiredStateChanges } from './desired-state-changes.service.js';
import {
  Cluster,
  ClusterConnection,
  RegisterClusterPayload,
  RotateClusterCredentialsPayload,
} from './models/cluster.model.js';
import { MigrationPlanResult } from './models/migration-plan.model.js';

const clusterUid = (id: string) => uidOf('Cluster', id, 'clusterId');

@Resolver(() => Cluster)
export class ClustersResolver {
  constructor(
    private readonly queries: ClusterQueries,
    private readonly registration: ClusterRegistration,
    private readonly changes: DesiredStateChanges,
  ) {}

  @Query(() => Cluster)
  @RequireRole('VIEWER')
  cluster(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => ID }) id: string,
  ): Promise<Cluster> {
    return this.queries.get(principal, uidOf('Cluster', id, 'id'));
  }

  @Query(() => ClusterConnection, {
    description: 'Clusters as a Relay connection (first/after or last/before, 1–100).',
  })
  @RequireRole('VIEWER')
  clusters(
    @CurrentPrincipal() principal: Principal,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
    @Args('last', { type: () => Int, nullable: true }) last: number | null,
    @Args('before', { type: () => String, nullable: true }) before: string | null,
    @Args('filter', { type: () => ClusterFilter, nullable: true }) filter: ClusterFilter | null,
    @Args('orderBy', { type: () => ClusterOrder, nullable: true }) orderBy: ClusterOrder | null,
    @Info() info: GraphQLResolveInfo,
  ): Promise<ClusterConnection> {
    // Counting costs a statement; only pay it when the client asks for the total.
    return this.queries.list(
      principal,
      { first, after, last, before },
      filter,
      orderBy,
      selects(info, 'totalCount') || selects(info, 'totalCountIsExact'),
    );
  }

  @Mutation(() => RegisterClusterPayload, {
    description: "Returns the sidecar's one-time credentials and bootstrap manifest.",
  })
  @RequireRole('ADMIN')
  registerCluster(
    @CurrentPrincipal() principal: Principal,
    @Args('input') input: RegisterClusterInput,
  ): Promise<RegisterClusterPayload> {
    return this.registration.register(principal, input);
  }

  @Mutation(() => RotateClusterCredentialsPayload, {
    description:
      'New sidecar credentials; the previous ones keep working for the grace period, then their open Redis connections are cut.',
  })
  @RequireRole('ADMIN')
  rotateClusterCredentials(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('gracePeriodSeconds', {
      type: () => Int,
      nullable: true,
      description:
        'How long the previous credentials keep working (0–604800 s; 0 ends them and cuts their connections at once). Default: the API’s CREDENTIAL_GRACE_SECONDS.',
    })
    gracePeriodSeconds: number | null,
  ): Promise<RotateClusterCredentialsPayload> {
    return this.registration.rotateCredentials(
      principal,
      clusterUid(clusterId),
      gracePeriodSeconds,
    );
  }

  @Mutation(() => Cluster)
  @RequireRole('ADMIN')
  deregisterCluster(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
  ): Promise<Cluster> {
    return this.registration.deregister(principal, clusterUid(clusterId));
  }

  @Mutation(() => Cluster)
  @RequireRole('OPERATOR')
  updateClusterLabels(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('labels', { type: () => JSONScalar }) labels: unknown,
  ): Promise<Cluster> {
    return this.changes.updateLabels(principal, clusterUid(clusterId), labels);
  }

  @Mutation(() => Cluster)
  @RequireRole('OPERATOR')
  setKarpenter(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('input') input: SetKarpenterInput,
  ): Promise<Cluster> {
    return this.changes.setKarpenter(principal, clusterUid(clusterId), input);
  }

  @Mutation(() => Cluster)
  @RequireRole('OPERATOR')
  upsertNodePool(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('input') input: UpsertNodePoolInput,
  ): Promise<Cluster> {
    return this.changes.upsertNodePool(principal, clusterUid(clusterId), input);
  }

  @Mutation(() => Cluster)
  @RequireRole('OPERATOR')
  deleteNodePool(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('name') name: string,
    @Args('expectedGeneration', { type: () => Int, nullable: true })
    expectedGeneration: number | null,
  ): Promise<Cluster> {
    return this.changes.deleteNodePool(principal, clusterUid(clusterId), name, expectedGeneration);
  }

  @Mutation(() => Cluster)
  @RequireRole('OPERATOR')
  setNodeClassOverrides(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('input') input: NodeClassOverridesInput,
  ): Promise<Cluster> {
    return this.changes.setNodeClassOverrides(principal, clusterUid(clusterId), input);
  }

  @Mutation(() => Cluster, {
    description: 'Stop reconciling: the sidecar leaves the cluster as it is.',
  })
  @RequireRole('OPERATOR')
  pauseCluster(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
  ): Promise<Cluster> {
    return this.changes.setKarpenter(
      principal,
      clusterUid(clusterId),
      { paused: true },
      'pauseCluster',
    );
  }

  @Mutation(() => Cluster)
  @RequireRole('OPERATOR')
  resumeCluster(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
  ): Promise<Cluster> {
    return this.changes.setKarpenter(
      principal,
      clusterUid(clusterId),
      { paused: false },
      'resumeCluster',
    );
  }

  @Query(() => MigrationPlanResult, {
    description:
      "The sidecar's proposal for moving the cluster from the Cluster Autoscaler to Karpenter (NodePools with explanations, NodeClass overrides, what cannot be expressed), or null with the reason.",
  })
  @RequireRole('VIEWER')
  migrationPlan(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
  ): Promise<MigrationPlanResult> {
    return this.queries.migrationPlan(principal, clusterUid(clusterId));
  }

  @Mutation(() => Cluster, {
    description:
      "Applies the cluster's migration plan as one desired-state change: its NodePools and NodeClass overrides, Karpenter enabled, clusterAutoscalerMode MIGRATE (both autoscalers run; switching to DISABLE is a separate step). CONFLICT unless the generation is still expectedGeneration.",
  })
  @RequireRole('OPERATOR')
  applyMigrationPlan(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('expectedGeneration', { type: () => Int }) expectedGeneration: number,
  ): Promise<Cluster> {
    return this.changes.applyMigrationPlan(principal, clusterUid(clusterId), expectedGeneration);
  }

  @Mutation(() => Cluster, {
    description: 'Send the current desired state again, even if the cluster reports it applied.',
  })
  @RequireRole('OPERATOR')
  reconcileCluster(
    @CurrentPrincipal() principal: Principal,
    @Args('clusterId', { type: () => ID }) clusterId: string,
  ): Promise<Cluster> {
    return this.changes.forceReconcile(principal, clusterUid(clusterId));
  }
}
