import { Module } from '@nestjs/common';
import { OidcLoginService } from './oidc-login.service.js';
import { OidcController } from './oidc.controller.js';

@Module({ controllers: [OidcController], providers: [OidcLoginService] })
export class OidcModule {}
