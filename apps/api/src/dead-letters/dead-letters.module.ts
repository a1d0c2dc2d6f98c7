import { Module } from '@nestjs/common';
import { DeadLettersResolver } from './dead-letters.resolver.js';
import { DeadLettersService } from './dead-letters.service.js';

@Module({ providers: [DeadLettersResolver, DeadLettersService] })
export class DeadLettersModule {}
