//! Which addresses a webhook may be sent to (server-side request forgery protection).
//!
//! A tenant names the URL its webhooks go to, and the control plane (or an edge plane)
//! then makes requests to it from inside its own network. Unless private targets are
//! allowed (`serve --allow-private-targets`, `edge --allow-private-targets`, the demo, the
//! desktop sandbox), a delivery may not connect to an address in any range named by
//! [`forbidden`]: loopback, link-local (cloud metadata services live at 169.254.169.254),
//! private, shared (CGNAT), unique-local, multicast, broadcast, unspecified or reserved.
//!
//! The rules live in the protocol crate so that the server and its clients judge a URL with
//! the same code: the control plane on every write, `switchyard gitops plan` before anything
//! is planned, under the policy the server advertises in `GET /v1/info`
//! ([`AddressPolicy::advertised`]).
//!
//! The server makes the check twice:
//! - on create, update and apply of a target, from the URL alone ([`url_forbidden`]): an IP
//!   literal in a forbidden range, or a `localhost` name, answers 400
//!   `target_address_forbidden`. Other names are not resolved then: what a name resolves to
//!   can change at any time.
//! - at connect time, on every attempt (the control plane's `WebhookClient`): the resolver
//!   hands the HTTP client only the permitted addresses of a name, so the address connected
//!   to is the address checked and a name that resolves differently later (DNS rebinding)
//!   cannot bypass it; an IP-literal URL, which never reaches the resolver, is checked
//!   before connecting. Either way the attempt fails with error class `forbidden_address`,
//!   which is not retried.

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
    // IPv4-translated (`::ffff:0:a.b.c.d`, RFC 2765), which SIIT translators forward to the
    // IPv4 address it carries.
    if s[..5] == [0, 0, 0, 0, 0xffff] && s[5] == 0 {
        return forbidden_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return forbidden_v4(embedded(s[1], s[2]));
    }
    if s[..3] == [0x64, 0xff9b, 1] {
        // Local-use NAT64 (RFC 8215): a network's own translator, to its own IPv4 space.
        return Some("local-use NAT64 (64:ff9b:1::/48)");
    }
    if s[..2] == [0x2001, 0] {
        // Teredo tunnels to an IPv4 client whose address is carried obfuscated; where it
        // leads cannot be judged here.
        return Some("Teredo (2001::/32)");
    }
    if s[..2] == [0x2001, 0xdb8] {
        return Some("documentation (2001:db8::/32)");
    }
    if s[..4] == [0x100, 0, 0, 0] {
        return Some("discard-only (100::/64)");
    }
    Some(match s[0] {
        0xfc00..=0xfdff => "unique-local (fc00::/7)",
        0xfe80..=0xfebf => "link-local (fe80::/10)",
        0xfec0..=0xfeff => "site-local (fec0::/10, deprecated)",
        0xff00..=0xffff => "multicast (ff00::/8)",
        _ => return None,
    })
}

/// An address range an operator forbids (`serve --forbid-cidr`, `edge --forbid-cidr`):
/// `10.20.0.0/16`, `fd00:ec2::/32`, or one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `ADDRESS/PREFIX` or a bare address (the whole address).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (addr, prefix) = text.split_once('/').unwrap_or((text, ""));
        let network: IpAddr = addr
            .parse()
            .map_err(|_| format!("{text:?} is not an address range (ADDRESS/PREFIX)"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            "" => max,
            p => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{text:?}: the prefix length is 0 to {max}"))?,
        };
        Ok(Self { network, prefix })
    }

    /// Whether `ip` is in the range (an IPv4-mapped IPv6 address is judged as its IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let bits = |ip: IpAddr| match ip {
            IpAddr::V4(v4) => u128::from(u32::from(v4)),
            IpAddr::V6(v6) => u128::from(v6),
        };
        let ip = ip.to_canonical();
        if ip.is_ipv4() != self.network.is_ipv4() || self.prefix == 0 {
            return ip.is_ipv4() == self.network.is_ipv4();
        }
        let width = if ip.is_ipv4() { 32 } else { 128 };
        let shift = width - u32::from(self.prefix);
        bits(ip) >> shift == bits(self.network) >> shift
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// Where a server or edge lets webhooks go: the built-in ranges of [`forbidden`] unless
/// private targets are allowed, and the operator's own ranges always.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    pub allow_private: bool,
    /// Refused even when private targets are allowed (a database subnet, a metadata
    /// service the built-in list does not know).
    pub forbid: Vec<Cidr>,
}

/// Which target addresses a server accepts (`GET /v1/info`: `target_addresses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TargetAddresses {
    /// Loopback, private, link-local and the other ranges [`forbidden`] names are refused
    /// (the default).
    PublicOnly,
    /// Any address (`--allow-private-targets`, the demo, the desktop sandbox), except the
    /// operator's forbidden ranges.
    Any,
}

/// Why an address is refused, and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub why: String,
    /// `true` for the operator's `--forbid-cidr`, which `--allow-private-targets` does not lift.
    pub by_operator: bool,
}

impl AddressPolicy {
    /// What `GET /v1/info` says of this policy: `target_addresses` and
    /// `forbidden_target_cidrs`.
    pub fn advertise(&self, info: &mut crate::ServerInfo) {
        info.target_addresses = Some(if self.allow_private {
            TargetAddresses::Any
        } else {
            TargetAddresses::PublicOnly
        });
        info.forbidden_target_cidrs = self.forbid.iter().map(Cidr::to_string).collect();
    }

    /// The policy a server advertises in `GET /v1/info`; `None` from a server too old to say
    /// (or one advertising a range this client cannot read), whose policy is then unknown.
    pub fn advertised(info: &crate::ServerInfo) -> Option<Self> {
        let allow_private = match info.target_addresses? {
            TargetAddresses::Any => true,
            TargetAddresses::PublicOnly => false,
        };
        let forbid = info
            .forbidden_target_cidrs
            .iter()
            .map(|c| Cidr::parse(c))
            .collect::<Result<_, _>>()
            .ok()?;
        Some(Self {
            allow_private,
            forbid,
        })
    }

    /// Whether this policy refuses nothing at all.
    pub fn allows_everything(&self) -> bool {
        self.allow_private && self.forbid.is_empty()
    }

    /// Why `ip` may not be connected to (`None`: permitted).
    pub fn refusal(&self, ip: IpAddr) -> Option<Refusal> {
        if let Some(range) = self.forbid.iter().find(|c| c.contains(ip)) {
            return Some(Refusal {
                why: format!("in {range}, which this server forbids (--forbid-cidr)"),
                by_operator: true,
            });
        }
        if self.allow_private {
            return None;
        }
        forbidden(ip).map(|why| Refusal {
            why: why.to_owned(),
            by_operator: false,
        })
    }

    /// [`url_forbidden`] under this policy: why a target URL may not be stored, judged from
    /// the URL alone.
    pub fn url_refusal(&self, url: &str) -> Option<Refusal> {
        let parsed = url::Url::parse(url).ok()?;
        if let Some(ip) = literal_ip(&parsed)
            && let Some(refusal) = self.refusal(ip)
        {
            return Some(Refusal {
                why: format!("host {} is {}", shown(ip), refusal.why),
                ..refusal
            });
        }
        if self.allow_private {
            return None;
        }
        url_forbidden(url).map(|why| Refusal {
            why,
            by_operator: false,
        })
    }
}

impl AddressPolicy {
    /// The problem (`spec.url`) a target whose `url` this policy refuses answers with: the
    /// control plane's `target_address_forbidden`, and what `gitops plan` reports first.
    pub fn url_problem(&self, url: &str) -> Option<crate::FieldError> {
        let refusal = self.url_refusal(url)?;
        let unless = if refusal.by_operator {
            "deliveries may not reach it"
        } else {
            "deliveries may not reach it unless the server runs with --allow-private-targets"
        };
        Some(crate::FieldError::new(
            "spec.url",
            format!("{}; {unless}", refusal.why),
        ))
    }
}

/// The IP address a URL's host spells, if it is one.
fn literal_ip(url: &url::Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    literal.unwrap_or(host).parse().ok()
}

/// Why a target URL may not be stored, judged from the URL alone: its host is an IP literal
/// in a forbidden range, or `localhost` or a name under `.localhost` (RFC 6761: always
/// loopback). `None` for every other URL, including one that does not parse (its own
/// validation reports that). The message names the host, never the rest of the URL (which
/// may carry credentials).
pub fn url_forbidden(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    // The parser has already normalised every IPv4 spelling (`2130706433`, `0x7f.1`,
    // `127.1`) to dotted decimal and put IPv6 literals in brackets.
    if let Some(ip) = literal_ip(&url) {
        return forbidden(ip).map(|why| format!("host {} is {why}", shown(ip)));
    }
    let host = url.host_str()?;
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
        for (addr, range) in [
            ("::ffff:0:127.0.0.1", "loopback (127"),
            ("::ffff:0:a9fe:a9fe", "link-local (169"),
            ("64:ff9b:1::a00:1", "local-use NAT64"),
            ("64:ff9b:1:ffff::1", "local-use NAT64"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
            ("2001::1", "Teredo"),
            ("2001:db8::1", "documentation"),
            ("100::1", "discard-only"),
        ] {
            let why = forbidden(ip(addr)).unwrap_or_else(|| panic!("{addr} is forbidden"));
            assert!(why.starts_with(range), "{addr}: {why}");
        }
        for addr in [
            "::ffff:8.8.8.8",
            "::ffff:0:808:808",
            "64:ff9b::808:808",
            "64:ff9b:2::1",
            "2002:808:808::1",
            "2001:1::1",
        ] {
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

    #[test]
    fn operator_ranges_are_refused_even_where_private_targets_are_allowed() {
        let cidr = |t: &str| Cidr::parse(t).unwrap();
        assert!(cidr("10.20.0.0/16").contains(ip("10.20.255.1")));
        assert!(cidr("10.20.0.0/16").contains(ip("::ffff:10.20.0.9")));
        assert!(!cidr("10.20.0.0/16").contains(ip("10.21.0.1")));
        assert!(cidr("fd00:ec2::254").contains(ip("fd00:ec2::254")));
        assert!(!cidr("fd00:ec2::254").contains(ip("fd00:ec2::255")));
        assert!(cidr("0.0.0.0/0").contains(ip("8.8.8.8")));
        assert!(!cidr("0.0.0.0/0").contains(ip("2606:4700::1")));
        for bad in [
            "10.0.0.0/33",
            "fd00::/129",
            "example.com/8",
            "10.0.0.0/x",
            "",
        ] {
            assert!(Cidr::parse(bad).is_err(), "{bad:?}");
        }
        let policy = AddressPolicy {
            allow_private: true,
            forbid: vec![cidr("10.20.0.0/16"), cidr("203.0.113.0/24")],
        };
        assert_eq!(policy.refusal(ip("10.1.1.1")), None, "private allowed");
        let refusal = policy.refusal(ip("10.20.1.1")).unwrap();
        assert!(
            refusal.by_operator && refusal.why.contains("10.20.0.0/16"),
            "{refusal:?}"
        );
        let refusal = policy.url_refusal("https://203.0.113.7/hook").unwrap();
        assert_eq!(
            refusal.why,
            "host 203.0.113.7 is in 203.0.113.0/24, which this server forbids (--forbid-cidr)"
        );
        assert_eq!(policy.url_refusal("http://localhost/hook"), None);
        let strict = AddressPolicy {
            allow_private: false,
            ..policy
        };
        assert!(
            !strict
                .url_refusal("http://localhost/hook")
                .unwrap()
                .by_operator
        );
    }
}
