extension DefaultsProvider {
    /// This store behind a journal: writes acknowledged once appended to a memory-mapped file,
    /// surviving `kill -9`; see ``JournaledProvider``. The journal is `<store file>.journal`,
    /// beside the store's file.
    ///
    /// ```swift
    /// let store = try LMDBProvider(path: path).journaled().cached()
    /// ```
    public func journaled(options: JournalOptions = JournalOptions()) throws(DefaultsError) -> JournaledProvider<Self> {
        guard let file = storeIdentity?.files.first else {
            throw DefaultsError(
                .invalidConfiguration, "A journal goes beside the store's file; this store is not kept in a file.",
                backend: JournalStore.backend)
        }
        return try JournaledProvider(self, journalPath: file + JournaledProvider<Self>.fileSuffix, options: options)
    }
}
