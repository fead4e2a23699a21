//! Which IP addresses the fetcher may connect to: globally routable unicast only. Everything else —
//! private, loopback, link-local (with the 169.254.169.254 metadata address), CGNAT, multicast,
//! broadcast, reserved, benchmarking and documentation ranges, and IPv6 forms that embed an IPv4
//! address (mapped, compatible, 6to4, NAT64, Teredo) unless the embedded address is itself public —
//! is refused. Written from the IANA special-purpose registries (RFC 6890 and updates), not from std's
//! unstable `is_global`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// True when `ip` is a globally routable unicast address the fetcher may connect to.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    const BLOCKED: [([u8; 4], u32); 17] = [
        ([0, 0, 0, 0], 8),       // "this network"
        ([10, 0, 0, 0], 8),      // private
        ([100, 64, 0, 0], 10),   // CGNAT shared address space
        ([127, 0, 0, 0], 8),     // loopback
        ([169, 254, 0, 0], 16),  // link-local, cloud metadata (169.254.169.254)
        ([172, 16, 0, 0], 12),   // private
        ([192, 0, 0, 0], 24),    // IETF protocol assignments
        ([192, 0, 2, 0], 24),    // TEST-NET-1
        ([192, 31, 196, 0], 24), // AS112-v4
        ([192, 52, 193, 0], 24), // AMT
        ([192, 88, 99, 0], 24),  // 6to4 relay anycast (deprecated)
        ([192, 168, 0, 0], 16),  // private
        ([192, 175, 48, 0], 24), // direct delegation AS112
        ([198, 18, 0, 0], 15),   // benchmarking
        ([198, 51, 100, 0], 24), // TEST-NET-2
        ([203, 0, 113, 0], 24),  // TEST-NET-3
        ([224, 0, 0, 0], 3),     // multicast 224/4 and reserved 240/4 (with broadcast)
    ];
    !BLOCKED.iter().any(|(net, prefix)| in_v4(ip, *net, *prefix))
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = if prefix == 0 { 0 } else { u128::MAX << (128 - prefix) };
    (u128::from(ip) & mask) == (u128::from(Ipv6Addr::from(net)) & mask)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let bits = u128::from(ip);
    // Forms that carry an IPv4 address: public only if that address is.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4); // ::ffff:a.b.c.d
    }
    if in_v6(ip, [0, 0, 0, 0, 0, 0, 0, 0], 96) {
        return false; // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
    }
    if in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        return is_public_v4(Ipv4Addr::from((bits & 0xffff_ffff) as u32)); // NAT64 well-known prefix
    }
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return is_public_v4(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32)); // 6to4
    }
    const BLOCKED: [([u16; 8], u32); 11] = [
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),       // local-use NAT64
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64),           // discard-only
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),          // IETF protocol assignments, Teredo (2001::/32) included
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),      // documentation
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),          // documentation (RFC 9637)
        ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16),          // SRv6 SIDs
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),           // unique local
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),          // link-local
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),          // site-local (deprecated)
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),           // multicast
        ([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254], 128), // AWS IMDS over IPv6 (inside fc00::/7; named for clarity)
    ];
    if BLOCKED.iter().any(|(net, prefix)| in_v6(ip, *net, *prefix)) {
        return false;
    }
    // Only the global unicast block 2000::/3 is routable on the internet today.
    in_v6(ip, [0x2000, 0, 0, 0, 0, 0, 0, 0], 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|_| panic!("{s}"))
    }

    #[test]
    fn refuses_every_special_purpose_ipv4_range() {
        for s in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.255.0.9",
            "169.254.169.254",
            "169.254.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.10",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!is_public(ip(s)), "{s} must be refused");
        }
    }

    #[test]
    fn accepts_public_ipv4_next_to_the_edges() {
        for s in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert!(is_public(ip(s)), "{s} is public");
        }
    }

    #[test]
    fn refuses_ipv6_special_forms_and_embedded_private_ipv4() {
        for s in [
            "::",
            "::1",
            "::127.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::1",
            "3fff::1",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "5f00::1",
            "4000::1",
        ] {
            assert!(!is_public(ip(s)), "{s} must be refused");
        }
    }

    #[test]
    fn accepts_public_ipv6_and_embedded_public_ipv4() {
        for s in [
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(is_public(ip(s)), "{s} is public");
        }
    }
}
