import { z } from 'zod';
import { celRules, exactlyOneOf, localObjectReference } from './common.ts';

export const gitRefSchema = z
  .object({
    branch: z.string().min(1).max(255).optional().describe('Follow the head of this branch.'),
    tag: z.string().min(1).max(255).optional().describe('Use this tag.'),
    commit: z
      .string()
      .regex(/^[0-9a-f]{7,64}$/, { message: 'must be a hexadecimal commit id' })
      .optional()
      .describe('Use this exact commit.'),
    semver: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe(
        'A semver range over tags. Not implemented: a Release using it gets Applied=False/Unsupported.',
      ),
  })
  .meta(celRules(exactlyOneOf(['branch', 'tag', 'commit', 'semver'])))
  .describe('The Git reference to check out: exactly one of branch, tag, commit or semver.');

export const gitSourceSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe('The repository URL. http(s) only; ssh URLs get Applied=False/Unsupported.'),
    ref: gitRefSchema,
    secretRef: localObjectReference(
      'A Secret with keys username and password, or bearerToken, used to authenticate.',
    ).optional(),
  })
  .describe('A Git repository location.');

export type GitRef = z.infer<typeof gitRefSchema>;
