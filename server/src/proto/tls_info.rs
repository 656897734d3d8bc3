//! What a service sees of a connection's TLS session: the core carries it to the exchange
//! without knowing TLS (the TLS layer, `tls/`, lends it for each call into the core).

/// What a service may know of a connection's TLS session ([`Exchange::tls`]).
///
/// [`Exchange::tls`]: crate::Exchange::tls
#[derive(Clone, Copy)]
pub struct TlsInfo<'a> {
    conn: &'a bufslab_tls::Connection,
}

impl<'a> TlsInfo<'a> {
    pub(crate) fn new(conn: &'a bufslab_tls::Connection) -> TlsInfo<'a> {
        TlsInfo { conn }
    }

    /// The ALPN protocol agreed (`http/1.1`), if the client offered ALPN.
    #[must_use]
    pub fn alpn_protocol(&self) -> Option<&'a [u8]> {
        self.conn.alpn_protocol()
    }

    /// The server name the client asked for (SNI), if it sent one.
    #[must_use]
    pub fn server_name(&self) -> Option<&'a str> {
        self.conn.server_name()
    }

    /// The protocol version, as OpenSSL names it: `TLSv1.3` or `TLSv1.2`.
    #[must_use]
    pub fn version(&self) -> &'static str {
        match u16::from(self.conn.protocol_version()) {
            0x0303 => "TLSv1.2",
            _ => "TLSv1.3",
        }
    }

    /// The cipher suite's IANA name, e.g. `TLS_AES_128_GCM_SHA256`, or in TLS 1.2
    /// `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`.
    #[must_use]
    pub fn cipher_suite(&self) -> &'static str {
        self.conn.cipher_suite_name()
    }

    /// Whether the handshake resumed an earlier session.
    #[must_use]
    pub fn is_resumed(&self) -> bool {
        self.conn.is_resumed()
    }

    /// The certificate chain the client presented, its own certificate first, each in DER;
    /// empty where the server asked for none (see `bufslab_tls::ConfigBuilder::client_auth`)
    /// or the client sent none. The server's verifier accepted it during the handshake.
    pub fn peer_certificates(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let chain = self.conn.peer_certificates().unwrap_or_default();
        chain.iter().map(|c| c.as_ref())
    }
}

impl std::fmt::Debug for TlsInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsInfo")
            .field("version", &self.version())
            .field("cipher_suite", &self.cipher_suite())
            .field("alpn_protocol", &self.alpn_protocol())
            .field("server_name", &self.server_name())
            .field("is_resumed", &self.is_resumed())
            .field("peer_certificates", &self.peer_certificates().count())
            .finish()
    }
}
