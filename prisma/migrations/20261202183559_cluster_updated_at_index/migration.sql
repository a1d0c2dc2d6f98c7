-- CreateIndex
CREATE INDEX "Cluster_updatedAt_idx" ON "Cluster"("updatedAt");

