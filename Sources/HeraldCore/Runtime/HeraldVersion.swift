/// Herald's version, shown by `--version`, `/metrics` (`herald_build_info`) and `/v1/status`.
public enum HeraldVersion {
    /// The version string.
    public static let current = "0.2.0"
}
