import { Module } from '@nestjs/common';
import { PlansModule } from '../plans/plans.module.js';
import { ReportsController } from './reports.controller.js';

@Module({ imports: [PlansModule], controllers: [ReportsController] })
export class ReportsModule {}
