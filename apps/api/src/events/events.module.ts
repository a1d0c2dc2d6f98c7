import { Global, Module } from '@nestjs/common';
import { FleetEventsService } from './fleet-events.service.js';

@Global()
@Module({ providers: [FleetEventsService], exports: [FleetEventsService] })
export class EventsModule {}
