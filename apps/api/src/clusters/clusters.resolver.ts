import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { ClusterFilter, RegisterClusterInput, SetKarpenterInput, UpsertNodePoolInput } from './dto/cluster.inputs.js';
import { ClustersService } from './clusters.service.js';
import { Cluster, ClusterConnection, RegisterClusterPayload } from './models/cluster.model.js';

@Resolver(() => Cluster)
export class ClustersResolver {
  constructor(private readonly service: ClustersService) {}

  @Query(() => Cluster)
  cluster(@Args('id', { type: () => ID }) id: string): Promise<Cluster> {
    return this.service.get(id);
  }

  @Query(() => ClusterConnection, { description: 'Clusters ordered by name, as a cursor connection.' })
  clusters(
    @Args('first', { type: () => Int, defaultValue: 20 }) first: number,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
    @Args('filter', { type: () => ClusterFilter, nullable: true }) filter: ClusterFilter | null,
  ): Promise<ClusterConnection> {
    return this.service.list(first, after, filter);
  }

  @Mutation(() => RegisterClusterPayload)
  registerCluster(@Args('input') input: RegisterClusterInput): Promise<RegisterClusterPayload> {
    return this.service.register(input);
  }

  @Mutation(() => Cluster)
  setKarpenter(
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('input') input: SetKarpenterInput,
  ): Promise<Cluster> {
    return this.service.setKarpenter(clusterId, input);
  }

  @Mutation(() => Cluster)
  upsertNodePool(
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('input') input: UpsertNodePoolInput,
  ): Promise<Cluster> {
    return this.service.upsertNodePool(clusterId, input);
  }

  @Mutation(() => Cluster)
  deleteNodePool(
    @Args('clusterId', { type: () => ID }) clusterId: string,
    @Args('name') name: string,
    @Args('expectedGeneration', { type: () => Int, nullable: true }) expectedGeneration: number | null,
  ): Promise<Cluster> {
    return this.service.deleteNodePool(clusterId, name, expectedGeneration);
  }
}
