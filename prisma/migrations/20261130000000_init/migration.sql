-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Topology" AS ENUM ('STANDALONE', 'HOSTED');

-- CreateEnum
CREATE TYPE "Platform" AS ENUM ('AWS', 'CAPI', 'AZURE');

-- CreateEnum
CREATE TYPE "ClusterAutoscalerMode" AS ENUM ('KEEP', 'DISABLE', 'MIGRATE');

-- CreateEnum
CREATE TYPE "LogLevel" AS ENUM ('debug', 'info', 'error');

-- CreateEnum
CREATE TYPE "ReconcileRunState" AS ENUM ('QUEUED', 'DISPATCHED', 'APPLIED', 'FAILED', 'SUPERSEDED');

-- CreateTable
CREATE TABLE "Cluster" (
    "id" UUID NOT NULL,
    "name" VARCHAR(63) NOT NULL,
    "topology" "Topology" NOT NULL,
    "platform" "Platform" NOT NULL,
    "region" VARCHAR(64) NOT NULL,
    "infraID" VARCHAR(128),
    "labels" JSONB NOT NULL DEFAULT '{}',
    "managementCluster" VARCHAR(253),
    "hcpNamespace" VARCHAR(63),
    "reportTokenHash" CHAR(64) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Cluster_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DesiredState" (
    "clusterId" UUID NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "clusterAutoscalerMode" "ClusterAutoscalerMode" NOT NULL DEFAULT 'KEEP',
    "logLevel" "LogLevel" NOT NULL DEFAULT 'info',
    "featureGates" JSONB NOT NULL DEFAULT '{"Drift": true}',
    "nodeClassOverrides" JSONB NOT NULL DEFAULT '{}',
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "DesiredState_pkey" PRIMARY KEY ("clusterId")
);

-- CreateTable
CREATE TABLE "NodePool" (
    "id" UUID NOT NULL,
    "clusterId" UUID NOT NULL,
    "name" VARCHAR(253) NOT NULL,
    "spec" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "NodePool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ClusterStatus" (
    "clusterId" UUID NOT NULL,
    "observedGeneration" INTEGER NOT NULL DEFAULT 0,
    "conditions" JSONB NOT NULL DEFAULT '[]',
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "lastReportAt" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ClusterStatus_pkey" PRIMARY KEY ("clusterId")
);

-- CreateTable
CREATE TABLE "HealthSample" (
    "clusterId" UUID NOT NULL,
    "observedAt" TIMESTAMPTZ(3) NOT NULL,
    "observedGeneration" INTEGER NOT NULL,
    "available" BOOLEAN NOT NULL,
    "degraded" BOOLEAN NOT NULL,
    "progressing" BOOLEAN NOT NULL,
    "metrics" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "HealthSample_pkey" PRIMARY KEY ("clusterId","observedAt")
);

-- CreateTable
CREATE TABLE "ReconcileRun" (
    "id" UUID NOT NULL,
    "clusterId" UUID NOT NULL,
    "generation" INTEGER NOT NULL,
    "state" "ReconcileRunState" NOT NULL DEFAULT 'QUEUED',
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatchedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ReconcileRun_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Cluster_name_key" ON "Cluster"("name");

-- CreateIndex
CREATE INDEX "Cluster_platform_topology_idx" ON "Cluster"("platform", "topology");

-- CreateIndex
CREATE INDEX "Cluster_createdAt_id_idx" ON "Cluster"("createdAt", "id");

-- CreateIndex
CREATE INDEX "DesiredState_enabled_idx" ON "DesiredState"("enabled");

-- CreateIndex
CREATE UNIQUE INDEX "NodePool_clusterId_name_key" ON "NodePool"("clusterId", "name");

-- CreateIndex
CREATE INDEX "ClusterStatus_lastReportAt_idx" ON "ClusterStatus"("lastReportAt");

-- CreateIndex
CREATE INDEX "ReconcileRun_state_idx" ON "ReconcileRun"("state");

-- CreateIndex
CREATE UNIQUE INDEX "ReconcileRun_clusterId_generation_key" ON "ReconcileRun"("clusterId", "generation");

-- AddForeignKey
ALTER TABLE "DesiredState" ADD CONSTRAINT "DesiredState_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodePool" ADD CONSTRAINT "NodePool_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ClusterStatus" ADD CONSTRAINT "ClusterStatus_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "HealthSample" ADD CONSTRAINT "HealthSample_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ReconcileRun" ADD CONSTRAINT "ReconcileRun_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

