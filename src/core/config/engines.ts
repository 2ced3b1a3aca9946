/** The voice engines' settings (TELEPHONY=vapi|retell; docs/engines.md), read by loadConfig. */
import { ConfigError, type Env, readUrl } from './readers.js';

export interface VapiConfig {
  /** VAPI_API_KEY: the private key, sent as a bearer token. */
  apiKey: string;
  /** VAPI_API_BASE, default https://api.vapi.ai (tests point it at a local server). */
  apiBase: string;
  /** VAPI_SERVER_CREDENTIAL_ID: the Custom Credential Vapi authenticates its server messages with. */
  serverCredentialId: string;
  /** VAPI_SERVER_SECRET: the bearer token of that credential (the legacy X-Vapi-Secret too). */
  serverSecret: string;
}

export interface RetellConfig {
  /** RETELL_API_KEY: the API key; Retell also signs its webhooks with it. */
  apiKey: string;
  /** RETELL_API_BASE, default https://api.retellai.com. */
  apiBase: string;
  /** RETELL_VOICE_ID: the voice of the Retell agents synced from published versions (default 11labs-Adrian). */
  voiceId: string;
}

export function readEngines(
  env: Env,
  telephony: 'simulated' | 'vapi' | 'retell',
): { vapi: VapiConfig | undefined; retell: RetellConfig | undefined } {
  const required = (name: string) => {
    const value = env[name];
    if (!value) throw new ConfigError(name, `is required when TELEPHONY=${telephony}`);
    return value;
  };
  const base = (name: string, fallback: string) =>
    (readUrl(env, name, ['http:', 'https:']) ?? fallback).replace(/\/+$/, '');
  if (telephony === 'vapi') {
    const serverSecret = required('VAPI_SERVER_SECRET');
    if (serverSecret.length < 16)
      throw new ConfigError('VAPI_SERVER_SECRET', 'must be at least 16 characters long');
    return {
      vapi: {
        apiKey: required('VAPI_API_KEY'),
        apiBase: base('VAPI_API_BASE', 'https://api.vapi.ai'),
        serverCredentialId: required('VAPI_SERVER_CREDENTIAL_ID'),
        serverSecret,
      },
      retell: undefined,
    };
  }
  if (telephony === 'retell') {
    return {
      vapi: undefined,
      retell: {
        apiKey: required('RETELL_API_KEY'),
        apiBase: base('RETELL_API_BASE', 'https://api.retellai.com'),
        voiceId: env.RETELL_VOICE_ID || '11labs-Adrian',
      },
    };
  }
  return { vapi: undefined, retell: undefined };
}
