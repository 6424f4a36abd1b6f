import streamlit as st

st.header('Tasks')
st.info('Coming soon.')
