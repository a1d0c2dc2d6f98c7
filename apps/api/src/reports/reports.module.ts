import { Module } from '@nestjs/common';
import { PlansModule } from '../plans/plans.module.js';
import { ReportBudget } from './report-budget.js';
import { ReportGate } from './report-gate.js';
import { ReportRoute } from './report-route.js';
import { ReportsController } from './reports.controller.js';

@Module({
  imports: [PlansModule],
  controllers: [ReportsController],
  providers: [ReportBudget, ReportGate, ReportRoute],
  exports: [ReportRoute],
})
export class ReportsModule {}
