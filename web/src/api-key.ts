// The API key the page sends: typed by the user and kept in localStorage, or in the demo the
// key the service offers at /web-config.json.

export const keyStorageName = "tokenmarket.apiKey";

type KeyStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

export type ApiKeyStore = {
  get(): string;
  /** Keeps a typed key; an empty one forgets the stored key. */
  set(key: string): void;
  /** True when the key in use is the demo key that nobody typed. */
  isDemo(): boolean;
};

/** The stored key wins over the demo key; without either the key is empty (the API says 403). */
export function createApiKeyStore(storage: KeyStorage | undefined, demoKey: string | undefined): ApiKeyStore {
  const read = () => {
    try {
      return storage?.getItem(keyStorageName) ?? "";
    } catch {
      return ""; // Storage refused (private mode, blocked cookies): the key lives for this page only.
    }
  };
  let key = read() || demoKey || "";
  return {
    get: () => key,
    set(value) {
      key = value.trim();
      try {
        if (key === "") storage?.removeItem(keyStorageName);
        else storage?.setItem(keyStorageName, key);
      } catch {
        // See read(): keep the key in memory.
      }
      if (key === "" && demoKey) key = demoKey;
    },
    isDemo: () => demoKey !== undefined && key === demoKey && read() === "",
  };
}
