/**
 * IPv4 and IPv6 CIDRs as the service reads them (an address alone is /32 or /128; `::ffff:a.b.c.d`
 * is matched as IPv4), to tell before saving an allowlist which keys it would shut out.
 */

type Address = { version: 4 | 6; value: bigint };

function parseIPv4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIPv6(text: string): bigint | null {
  let head = text;
  let tailGroups: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseIPv4(dotted[2] as string);
    if (v4 === null) return null;
    head = `${dotted[1] as string}0:0`;
    tailGroups = [Number(v4 >> 16n), Number(v4 & 0xffffn)];
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const left = groups(halves[0] as string);
  const right = halves.length === 2 ? groups(halves[1] as string) : [];
  const total = left.length + right.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return null;
  const all = [...left, ...Array<string>(8 - total).fill("0"), ...right];
  let value = 0n;
  for (const group of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  if (tailGroups.length) value = (value & ~0xffffffffn) | (BigInt(tailGroups[0] as number) << 16n) | BigInt(tailGroups[1] as number);
  return value;
}

const MAPPED_PREFIX = 0xffffn << 32n;

export function parseAddress(text: string): Address | null {
  const v4 = parseIPv4(text.trim());
  if (v4 !== null) return { version: 4, value: v4 };
  const v6 = parseIPv6(text.trim());
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn && (v6 & ~0xffffffffn) === MAPPED_PREFIX) return { version: 4, value: v6 & 0xffffffffn };
  return { version: 6, value: v6 };
}

export interface Cidr { version: 4 | 6; network: bigint; prefix: number; text: string }

/** A CIDR (or a bare address), or null when it is not one. */
export function parseCidr(text: string): Cidr | null {
  const [addressText = "", prefixText, extra] = text.trim().split("/");
  if (extra !== undefined) return null;
  const address = parseAddress(addressText);
  if (!address) return null;
  const bits = address.version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return null;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  return { version: address.version, network: address.value & mask, prefix, text: text.trim() };
}

export function contains(cidr: Cidr, address: Address): boolean {
  if (cidr.version !== address.version) return false;
  const bits = cidr.version === 4 ? 32 : 128;
  const shift = BigInt(bits - cidr.prefix);
  return (address.value >> shift) === (cidr.network >> shift);
}

/** Whether the list lets the address in (an empty list lets every address in). */
export function allows(cidrs: Cidr[], addressText: string): boolean {
  if (cidrs.length === 0) return true;
  const address = parseAddress(addressText);
  return address !== null && cidrs.some((cidr) => contains(cidr, address));
}

/** The lines of an allowlist editor: the CIDRs, and the lines that are not CIDRs. */
export function parseList(text: string): { cidrs: Cidr[]; invalid: string[] } {
  const lines = text.split(/[\n,]/).map((l) => l.trim()).filter(Boolean);
  const cidrs: Cidr[] = [];
  const invalid: string[] = [];
  for (const line of lines) {
    const cidr = parseCidr(line);
    if (cidr) cidrs.push(cidr); else invalid.push(line);
  }
  return { cidrs, invalid };
}
