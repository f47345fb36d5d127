//! Words from outside the catalog in the reader's language: an operating-system error named by its kind with its own text quoted after it, any other library's or server's text quoted.
//!
//! The operating system and the libraries speak English (`connection refused`, `no such file or
//! directory`). A Japanese sentence names the kind of the error in Japanese and quotes the
//! original after it (`接続が拒否されました（「connection refused」）`); a text whose kind is not
//! known is quoted alone (`「invalid i64」`), so that a reader sees where the words come from. In
//! English the original text is shown as it is.

use std::io::ErrorKind;

use super::Message;
use crate::msg;

/// The innermost cause of an error chain on one line, lower-cased like Go's net errors
/// (`connection refused`), without the `(os error N)` suffix.
pub fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost: &dyn std::error::Error = error;
    while let Some(source) = innermost.source() {
        innermost = source;
    }
    let text = innermost.to_string();
    let text = match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    };
    let mut chars = text.chars();
    let text = match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => error.to_string(),
    };
    text.replace('\n', " ")
}

/// `error` (with its chain) for a reader: the kind of the operating-system error in the chain,
/// if any, with the innermost text ([`one_line`]) quoted after it; else that text, quoted.
pub fn cause(error: &(dyn std::error::Error + 'static)) -> Message {
    let text = one_line(error);
    let mut link: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut kind = None;
    while let Some(current) = link {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            kind = Some(io.kind());
        }
        link = current.source();
    }
    match kind.and_then(kind_name) {
        Some(kind) => msg!("os-error", kind = kind, text = text),
        None => quoted(text),
    }
}

/// A text from a library or a server, quoted in a language other than English.
pub fn quoted(text: impl Into<String>) -> Message {
    msg!("quoted-text", text = text.into())
}

/// The words for an operating-system error's kind; `None` for a kind that says nothing more
/// than its text.
fn kind_name(kind: ErrorKind) -> Option<Message> {
    Some(match kind {
        ErrorKind::NotFound => msg!("os-not-found"),
        ErrorKind::PermissionDenied => msg!("os-permission-denied"),
        ErrorKind::ConnectionRefused => msg!("os-connection-refused"),
        ErrorKind::ConnectionReset => msg!("os-connection-reset"),
        ErrorKind::ConnectionAborted => msg!("os-connection-aborted"),
        ErrorKind::NotConnected => msg!("os-not-connected"),
        ErrorKind::HostUnreachable => msg!("os-host-unreachable"),
        ErrorKind::NetworkUnreachable => msg!("os-network-unreachable"),
        ErrorKind::AddrInUse => msg!("os-address-in-use"),
        ErrorKind::AddrNotAvailable => msg!("os-address-not-available"),
        ErrorKind::BrokenPipe => msg!("os-broken-pipe"),
        ErrorKind::AlreadyExists => msg!("os-already-exists"),
        ErrorKind::TimedOut => msg!("os-timed-out"),
        ErrorKind::UnexpectedEof => msg!("os-unexpected-eof"),
        ErrorKind::InvalidData => msg!("os-invalid-data"),
        ErrorKind::IsADirectory => msg!("os-is-a-directory"),
        ErrorKind::NotADirectory => msg!("os-not-a-directory"),
        ErrorKind::DirectoryNotEmpty => msg!("os-directory-not-empty"),
        ErrorKind::ReadOnlyFilesystem => msg!("os-read-only-filesystem"),
        ErrorKind::StorageFull => msg!("os-storage-full"),
        ErrorKind::OutOfMemory => msg!("os-out-of-memory"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Lang;

    #[test]
    fn an_os_error_is_named_by_kind_with_its_text_quoted() {
        let io = std::io::Error::from_raw_os_error(111);
        assert_eq!(one_line(&io), "connection refused");
        assert_eq!(cause(&io).render(Lang::En), "connection refused");
        assert_eq!(cause(&io).render(Lang::Ja), "接続が拒否されました（「connection refused」）");
        let missing = std::io::Error::from_raw_os_error(2);
        assert_eq!(
            cause(&missing).render(Lang::Ja),
            "ファイルまたはディレクトリがありません（「no such file or directory」）"
        );
    }

    #[test]
    fn a_wrapped_os_error_is_found_and_other_texts_are_quoted() {
        #[derive(Debug, thiserror::Error)]
        #[error("tcp connect error")]
        struct Connect(#[source] std::io::Error);
        let wrapped = Connect(std::io::Error::from(ErrorKind::ConnectionRefused));
        assert!(cause(&wrapped).render(Lang::Ja).starts_with("接続が拒否されました（「"));
        let other = std::fmt::Error;
        assert_eq!(cause(&other).render(Lang::Ja), "「an error occurred when formatting an argument」");
        assert_eq!(cause(&other).render(Lang::En), "an error occurred when formatting an argument");
    }
}
