-- CreateIndex
CREATE INDEX "Cluster_labels_idx" ON "Cluster" USING GIN ("labels" jsonb_ops);

