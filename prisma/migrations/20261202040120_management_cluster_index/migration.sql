-- CreateIndex
CREATE INDEX "Cluster_managementCluster_idx" ON "Cluster"("managementCluster");

