//! Which addresses a webhook may be sent to (server-side request forgery protection).
//!
//! A tenant names the URL its webhooks go to, and the control plane (or an edge plane)
//! then makes requests to it from inside its own network. Unless private targets are
//! allowed (`serve --allow-private-targets`, `edge --allow-private-targets`, the demo, the
//! desktop sandbox), a delivery may not connect to an address in any range named by
//! [`forbidden`]: loopback, link-local (cloud metadata services live at 169.254.169.254),
//! private, shared (CGNAT), unique-local, multicast, broadcast, unspecified or reserved.
//!
//! The check is made twice:
//! - on create, update and apply of a target, from the URL alone ([`url_forbidden`]): an IP
//!   literal in a forbidden range, or a `localhost` name, answers 400
//!   `target_address_forbidden`. Other names are not resolved then: what a name resolves to
//!   can change at any time.
//! - at connect time, on every attempt ([`super::http::WebhookClient`]): the resolver hands
//!   the HTTP client only the permitted addresses of a name, so the address connected to is
//!   the address checked and a name that resolves differently later (DNS rebinding) cannot
//!   bypass it; an IP-literal URL, which never reaches the resolver, is checked before
//!   connecting. Either way the attempt fails with error class `forbidden_address`, which
//!   is not retried.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The forbidden range `ip` falls in, named for error messages (`None`: permitted).
///
/// IPv6 addresses that carry an IPv4 address — IPv4-mapped (`::ffff:a.b.c.d`, which a
/// dual-stack socket connects to over IPv4), NAT64 (`64:ff9b::a.b.c.d`) and 6to4
/// (`2002:aabb:ccdd::`) — are judged by the IPv4 address they carry; IPv4-compatible
/// addresses (`::a.b.c.d`, deprecated) are forbidden outright.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_broadcast() => "broadcast (255.255.255.255)",
        (0, _, _) => "unspecified (0.0.0.0/8)",
        (10, _, _) => "private (10.0.0.0/8)",
        (100, 64..=127, _) => "shared address space (100.64.0.0/10)",
        (127, _, _) => "loopback (127.0.0.0/8)",
        (169, 254, _) => "link-local (169.254.0.0/16)",
        (172, 16..=31, _) => "private (172.16.0.0/12)",
        (192, 0, 0) => "IETF protocol assignments (192.0.0.0/24)",
        (192, 168, _) => "private (192.168.0.0/16)",
        (198, 18..=19, _) => "benchmarking (198.18.0.0/15)",
        (224..=239, _, _) => "multicast (224.0.0.0/4)",
        (240..=255, _, _) => "reserved (240.0.0.0/4)",
        _ => return None,
    })
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("unspecified (::)");
    }
    if ip.is_loopback() {
        return Some("loopback (::1)");
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return forbidden_v4(v4);
    }
    if s[..6] == [0; 6] {
        return Some("IPv4-compatible (::/96, deprecated)");
    }
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return forbidden_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return forbidden_v4(embedded(s[1], s[2]));
    }
    Some(match s[0] {
        0xfc00..=0xfdff => "unique-local (fc00::/7)",
        0xfe80..=0xfebf => "link-local (fe80::/10)",
        0xfec0..=0xfeff => "site-local (fec0::/10, deprecated)",
        0xff00..=0xffff => "multicast (ff00::/8)",
        _ => return None,
    })
}

/// Why a target URL may not be stored, judged from the URL alone: its host is an IP literal
/// in a forbidden range, or `localhost` or a name under `.localhost` (RFC 6761: always
/// loopback). `None` for every other URL, including one that does not parse (its own
/// validation reports that). The message names the host, never the rest of the URL (which
/// may carry credentials).
pub fn url_forbidden(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    // The parser has already normalised every IPv4 spelling (`2130706433`, `0x7f.1`,
    // `127.1`) to dotted decimal and put IPv6 literals in brackets.
    let host = url.host_str()?;
    let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    if let Ok(ip) = literal.unwrap_or(host).parse::<IpAddr>() {
        return forbidden(ip).map(|why| format!("host {} is {why}", shown(ip)));
    }
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost"))
        .then(|| format!("host {name} is loopback (localhost)"))
}

/// An address as a URL spells its host (IPv6 in brackets).
pub fn shown(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn forbidden_ipv4_ranges_are_named() {
        for (addr, range) in [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("10.0.0.1", "private (10."),
            ("100.64.0.1", "shared"),
            ("100.127.255.254", "shared"),
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("169.254.169.254", "link-local"),
            ("172.16.0.1", "private (172."),
            ("172.31.255.255", "private (172."),
            ("192.0.0.170", "IETF"),
            ("192.168.1.1", "private (192.168"),
            ("198.18.0.1", "benchmarking"),
            ("224.0.0.251", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
        ] {
            let why = forbidden(ip(addr)).unwrap_or_else(|| panic!("{addr} is forbidden"));
            assert!(why.starts_with(range), "{addr}: {why}");
        }
    }

    #[test]
    fn public_ipv4_addresses_are_permitted() {
        for addr in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "126.255.255.255",
            "128.0.0.1",
            "169.253.1.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.0.1.1",
            "192.167.1.1",
            "198.17.1.1",
            "198.20.0.1",
            "203.0.114.1",
            "223.255.255.255",
        ] {
            assert_eq!(forbidden(ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn forbidden_ipv6_ranges_are_named() {
        for (addr, range) in [
            ("::", "unspecified"),
            ("::1", "loopback (::1)"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("fe80::1", "link-local (fe80"),
            ("febf::1", "link-local (fe80"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("ff0e::1", "multicast"),
            ("::2", "IPv4-compatible"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("::8.8.8.8", "IPv4-compatible"),
        ] {
            let why = forbidden(ip(addr)).unwrap_or_else(|| panic!("{addr} is forbidden"));
            assert!(why.starts_with(range), "{addr}: {why}");
        }
    }

    #[test]
    fn ipv6_forms_carrying_ipv4_are_judged_by_the_ipv4_address() {
        for (addr, range) in [
            ("::ffff:127.0.0.1", "loopback (127"),
            ("::ffff:7f00:1", "loopback (127"),
            ("::ffff:169.254.169.254", "link-local (169"),
            ("::ffff:10.1.2.3", "private (10."),
            ("::ffff:0.0.0.0", "unspecified (0."),
            ("64:ff9b::127.0.0.1", "loopback (127"),
            ("64:ff9b::a9fe:a9fe", "link-local (169"),
            ("2002:7f00:1::", "loopback (127"),
            ("2002:c0a8:101::1", "private (192.168"),
        ] {
            let why = forbidden(ip(addr)).unwrap_or_else(|| panic!("{addr} is forbidden"));
            assert!(why.starts_with(range), "{addr}: {why}");
        }
        for addr in ["::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"] {
            assert_eq!(forbidden(ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn public_ipv6_addresses_are_permitted() {
        for addr in [
            "2001:4860:4860::8888",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
            "fbff::1",
            "fe7f::1",
        ] {
            assert_eq!(forbidden(ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn urls_are_judged_by_their_host() {
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://[::ffff:127.0.0.1]/hook",
            "http://[::1]/",
            "https://169.254.169.254/latest/meta-data/",
            "http://10.0.0.5/",
            "http://0.0.0.0:9000/",
            "http://localhost/hook",
            "http://LOCALHOST./hook",
            "http://api.localhost:3000/",
            // Every spelling the URL parser reads as an IPv4 address.
            "http://2130706433/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://user:pass@127.0.0.1/",
        ] {
            let why = url_forbidden(url).unwrap_or_else(|| panic!("{url} is forbidden"));
            assert!(!why.contains("pass"), "{why}");
        }
        for url in [
            "https://hooks.example.com/x",
            "http://8.8.8.8/",
            "http://[2606:4700:4700::1111]/",
            "http://localhost.example.com/",
            "http://notlocalhost/",
            "not a url",
        ] {
            assert_eq!(url_forbidden(url), None, "{url}");
        }
        assert_eq!(
            url_forbidden("http://[::ffff:127.0.0.1]:9/").unwrap(),
            "host [::ffff:127.0.0.1] is loopback (127.0.0.0/8)"
        );
    }
}
