/// How far a download has come: what `LocalSystemModel.download()` yields,
/// a few times a second and once at the end.
///
/// `completedBytes` never goes down: when a download has to start over (the
/// server ignored the range, or the file changed), the count stays where it
/// was until the new transfer passes it.
public struct DownloadProgress: Sendable, Hashable, CustomStringConvertible {
  /// The bytes of the file on disk so far, resumed ones included.
  public let completedBytes: Int64
  /// The file's size, nil until the server has said it.
  public let totalBytes: Int64?

  /// A reading of `completedBytes` of `totalBytes`.
  public init(completedBytes: Int64, totalBytes: Int64?) {
    self.completedBytes = completedBytes
    self.totalBytes = totalBytes
  }

  /// 0...1 of the whole; 0 while the size is unknown.
  public var fractionCompleted: Double {
    guard let totalBytes, totalBytes > 0 else { return 0 }
    return min(1, max(0, Double(completedBytes) / Double(totalBytes)))
  }

  /// Whether every byte is there.
  public var isFinished: Bool { totalBytes.map { completedBytes >= $0 } ?? false }

  /// "1048576 of 4194304 bytes (25%)".
  public var description: String {
    guard let totalBytes else { return "\(completedBytes) bytes" }
    return "\(completedBytes) of \(totalBytes) bytes (\(Int(fractionCompleted * 100))%)"
  }
}
