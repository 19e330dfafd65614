import { Button, Group, Stack, TextInput } from "@mantine/core";
import { IconPlus } from "@tabler/icons-react";
import { useState } from "react";
import type { GitopsSource, IpcError } from "../../ipc/bindings";
import { useAddSource } from "../../ipc/gitopsQueries";
import { ErrorAlert } from "../ErrorAlert";

const empty = { repo: "", git_ref: "HEAD", path: "" };

/** Adds a source: a local repository path, a ref and the manifests' folder. */
export function SourceForm({ onAdded }: { onAdded: (source: GitopsSource) => void }) {
  const add = useAddSource();
  const [values, setValues] = useState(empty);
  const [missing, setMissing] = useState(false);
  const set = (field: keyof typeof empty) => (event: React.ChangeEvent<HTMLInputElement>) =>
    setValues({ ...values, [field]: event.currentTarget.value });
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    if (!values.repo.trim()) {
      setMissing(true);
      return;
    }
    setMissing(false);
    add.mutate(values, {
      onSuccess: (source) => {
        setValues(empty);
        onAdded(source);
      },
    });
  };
  return (
    <form onSubmit={submit}>
      <Stack gap="xs">
        <TextInput
          label="Repository"
          description="A local Git repository (run git fetch for a remote one)"
          placeholder="/srv/delivery-config"
          value={values.repo}
          onChange={set("repo")}
          error={missing ? "The repository's path is required" : null}
          data-testid="source-repo"
        />
        <Group grow align="flex-start">
          <TextInput
            label="Ref"
            description="Branch, tag, origin/main, commit"
            value={values.git_ref}
            onChange={set("git_ref")}
            data-testid="source-ref"
          />
          <TextInput
            label="Folder"
            description="Where the manifests are"
            placeholder="deploy/prod"
            value={values.path}
            onChange={set("path")}
            data-testid="source-path"
          />
        </Group>
        {add.isError && (
          <ErrorAlert error={add.error as unknown as IpcError} title="Cannot read this source" />
        )}
        <Group justify="flex-end">
          <Button
            type="submit"
            leftSection={<IconPlus size={16} />}
            loading={add.isPending}
            data-testid="source-add"
          >
            Add source
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
