import type { Brand } from "../brand";

/** The product's logo and name, as the operator configured them (brand.ts checked both). The logo is
 * decorative beside the name: its text alternative would repeat it. */
export function BrandMark({ brand }: { brand: Brand }) {
  return <><img class="logo" src={brand.logo} alt="" width={28} height={28} /><span>{brand.name}</span></>;
}
