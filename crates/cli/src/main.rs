fn main() -> anyhow::Result<()> {
    anyhow::bail!("the switchyard CLI is not built yet (issue 4)")
}
