/** `npm run sdk:generate`: writes the SDK's types from the served partner document (sdk-document.ts). */
import fs from 'node:fs';
import { GENERATED_TYPES, generatedTypes, servedPartnerDocument } from './sdk-document.js';

const text = await generatedTypes(await servedPartnerDocument());
fs.writeFileSync(GENERATED_TYPES, text);
console.log(`Wrote ${GENERATED_TYPES} (${text.split('\n').length} lines).`);
