import { Module } from '@nestjs/common';
import { PlansModule } from '../plans/plans.module.js';
import { ReportGate } from './report-gate.js';
import { ReportRoute } from './report-route.js';
import { ReportsController } from './reports.controller.js';

@Module({
  imports: [PlansModule],
  controllers: [ReportsController],
  providers: [ReportGate, ReportRoute],
  exports: [ReportRoute],
})
export class ReportsModule {}
