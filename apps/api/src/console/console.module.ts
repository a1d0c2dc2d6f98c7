import { type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { ConsoleStaticMiddleware } from './console-static.middleware.js';

@Module({ providers: [ConsoleStaticMiddleware] })
export class ConsoleModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(ConsoleStaticMiddleware).forRoutes('{*path}');
  }
}
