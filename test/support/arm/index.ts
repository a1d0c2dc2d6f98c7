export * from './arm-emulator.js';
