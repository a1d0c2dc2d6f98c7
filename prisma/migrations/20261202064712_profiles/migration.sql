-- AlterTable
ALTER TABLE "DesiredState" ADD COLUMN     "overrides" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "sources" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "Rollout" ADD COLUMN     "profileId" UUID,
ADD COLUMN     "profileRevision" INTEGER;

-- CreateTable
CREATE TABLE "Profile" (
    "id" UUID NOT NULL,
    "name" VARCHAR(63) NOT NULL,
    "selector" VARCHAR(4096) NOT NULL,
    "priority" INTEGER NOT NULL,
    "spec" JSONB NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "deletedAt" TIMESTAMPTZ(3),
    "createdBy" VARCHAR(256) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Profile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProfileRevision" (
    "profileId" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "selector" VARCHAR(4096) NOT NULL,
    "priority" INTEGER NOT NULL,
    "spec" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ProfileRevision_pkey" PRIMARY KEY ("profileId","revision")
);

-- CreateTable
CREATE TABLE "ClusterProfile" (
    "clusterId" UUID NOT NULL,
    "profileId" UUID NOT NULL,
    "revision" INTEGER NOT NULL,

    CONSTRAINT "ClusterProfile_pkey" PRIMARY KEY ("clusterId","profileId")
);

-- CreateIndex
CREATE UNIQUE INDEX "Profile_name_key" ON "Profile"("name");

-- CreateIndex
CREATE INDEX "ClusterProfile_profileId_idx" ON "ClusterProfile"("profileId");

-- AddForeignKey
ALTER TABLE "ProfileRevision" ADD CONSTRAINT "ProfileRevision_profileId_fkey" FOREIGN KEY ("profileId") REFERENCES "Profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ClusterProfile" ADD CONSTRAINT "ClusterProfile_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ClusterProfile" ADD CONSTRAINT "ClusterProfile_profileId_fkey" FOREIGN KEY ("profileId") REFERENCES "Profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Data: per-cluster desired state becomes the cluster overrides (docs/PROFILES.md)
UPDATE "DesiredState" d SET
  "overrides" = jsonb_build_object(
    'enabled', d."enabled",
    'clusterAutoscalerMode', d."clusterAutoscalerMode"::text,
    'logLevel', d."logLevel"::text,
    'featureGates', d."featureGates",
    'nodeClassOverrides', d."nodeClassOverrides",
    'karpenterVersion', d."karpenterVersion",
    'driftPolicy', d."driftPolicy"::text,
    'nodePools', COALESCE(
      (SELECT jsonb_object_agg(p."name", p."spec") FROM "NodePool" p WHERE p."clusterId" = d."clusterId"),
      '{}'::jsonb)),
  "sources" = jsonb_build_object(
    'enabled', '{"kind":"override"}'::jsonb,
    'clusterAutoscalerMode', '{"kind":"override"}'::jsonb,
    'logLevel', '{"kind":"override"}'::jsonb,
    'featureGates', '{"kind":"override"}'::jsonb,
    'nodeClassOverrides', '{"kind":"override"}'::jsonb,
    'karpenterVersion', '{"kind":"override"}'::jsonb,
    'driftPolicy', '{"kind":"override"}'::jsonb) || COALESCE(
      (SELECT jsonb_object_agg('nodePools.' || p."name", '{"kind":"override"}'::jsonb)
         FROM "NodePool" p WHERE p."clusterId" = d."clusterId"),
      '{}'::jsonb);
