import { expectTypeOf, test } from 'vitest';
import type { z } from 'zod';
import type { MockSeed } from '../../src/mock/index.js';
import type { mockSeedSchema } from '../../src/mock/service/seed-schema.js';

test('every MockSeed is accepted by the seed schema, and the schema yields a MockSeed shape', () => {
  expectTypeOf<MockSeed>().toExtend<z.input<typeof mockSeedSchema>>();
  expectTypeOf<keyof z.output<typeof mockSeedSchema>['servers'][number]>().toEqualTypeOf<keyof MockSeed['servers'][number]>();
  type SchemaProduct = NonNullable<z.output<typeof mockSeedSchema>['servers'][number]['products']>[number];
  type SeedProduct = NonNullable<MockSeed['servers'][number]['products']>[number];
  expectTypeOf<keyof SchemaProduct>().toEqualTypeOf<keyof SeedProduct>();
});
