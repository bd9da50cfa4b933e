/** The catalog operation (`getCatalog`): `POST /api/v2/client/global/products`. */
import { z } from 'zod';
import { activeSales, isAvailable, priceWithSale } from '../service/rules.js';
import type { MockSeedProduct } from '../service/seed.js';
import { resolveServer, type MockState } from '../service/state.js';
import { TEXT } from '../service/texts.js';
import { type WireRequest, type WireResponse, badRequest, decodeBody, positiveInt, readFields } from '../service/wire.js';

/** Catalog body: `{}` or `{"categoryId": <int>}`. */
const getCatalogBodySchema = z.strictObject({ categoryId: positiveInt.optional() });

/**
 * Lists the products that are enabled and inside their window now, with only the sales
 * active now; `categoryId` narrows to one category. An unknown key answers HTTP 200 with
 * `GAME_SERVER_NOT_FOUND`.
 */
export function getCatalog(state: MockState, request: WireRequest): WireResponse {
  const server = resolveServer(state, request, 'base64');
  if (server === undefined) {
    return { status: 200, body: { products: [], message: 'GAME_SERVER_NOT_FOUND', extendedMessage: TEXT.catalogServerNotFound } };
  }
  // Some plugins post no body at all for "everything"; that reads as `{}` (I-18).
  const decoded = request.body.trim() === '' ? ({ ok: true, value: {} } as const) : decodeBody(request, ['json']);
  const body = readFields(getCatalogBodySchema, decoded);
  if (!body.ok) {
    return badRequest(body.status, body.problem);
  }
  const now = state.clock.now();
  const { categoryId } = body.value;
  const products = [...server.products.values()]
    .filter((p) => isAvailable(p, now))
    .filter((p) => categoryId === undefined || (p.categoryIds ?? []).includes(categoryId))
    .map((p) => catalogProduct(p, now));
  return { status: 200, body: { message: 'SUCCESS', products } };
}

function catalogProduct(product: MockSeedProduct, now: number): Record<string, unknown> {
  return {
    id: product.id,
    productId: product.productId,
    name: product.name,
    price: product.price,
    priceOriginal: product.price,
    priceWithSale: priceWithSale(product, now),
    quantity: product.quantity ?? 1,
    description: product.description ?? '',
    image: product.image ?? '',
    disabled: false,
    sales: activeSales(product, now).map((sale) => ({
      saleType: sale.saleType,
      discountPercentage: sale.discountPercentage ?? 0,
      discountAmount: sale.discountAmount ?? 0,
      ...(sale.startDate === undefined ? {} : { startDate: sale.startDate }),
      ...(sale.endDate === undefined ? {} : { endDate: sale.endDate }),
    })),
    // Extras beyond the documented fields (I-18); clients keep them (passthrough).
    categoryIds: product.categoryIds ?? [],
    stock: product.stock ?? null,
  };
}
